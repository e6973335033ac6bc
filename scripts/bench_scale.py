#!/usr/bin/env python3
"""Side by side: the same shelf-bench benchmarks at two library sizes, with the ratio.

Usage: bench_scale.py SMALL.json LARGE.json [SMALL.json LARGE.json ...]

Each file is one `shelf-bench ... --json` document. Rows of the keyed tables are paired by their
first text cell when those are unique and the same at both sizes, else by position (a row's name
may quote the library's own counts), and every numeric cell is printed at both sizes with
LARGE / SMALL beside it. Prints Markdown tables,
then one JSON line per pair of figures (for the README's table and for later comparison).
"""
import json
import sys


def label(row):
    """The row's first text cell (by key order), numbers left in: rows at two sizes that differ
    only by a count quoted in their name are paired by position instead."""
    for value in row.values():
        if isinstance(value, str):
            return value
    return None


def tracks(document):
    args = document.get("arguments", [])
    for flag in ("--tracks", "--files"):
        if flag in args and args.index(flag) + 1 < len(args):
            return args[args.index(flag) + 1]
    return "?"


def pairs(small, large):
    """Rows of each keyed table side by side: by label when every label is present and unique at
    both sizes, else by position (a table whose rows have no text, or repeat it)."""
    for key, rows in small.items():
        if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
            continue
        others = [row for row in large.get(key, []) if isinstance(row, dict)]
        labels = [label(row) for row in rows]
        other_labels = [label(row) for row in others]
        by_label = (None not in labels and len(set(labels)) == len(labels)
                    and len(set(other_labels)) == len(other_labels) and set(labels) == set(other_labels))
        if by_label:
            matched = [(row, dict(zip(other_labels, others)).get(name)) for row, name in zip(rows, labels)]
        else:
            if len(rows) != len(others):
                print(f"warning: {key}: {len(rows)} rows beside {len(others)}, paired by position", file=sys.stderr)
            matched = list(zip(rows, others))
        for row, other in matched:
            if other is None:
                continue
            text = next((v for v in row.values() if isinstance(v, str)), f"row {rows.index(row) + 1}")
            for column, value in row.items():
                big = other.get(column)
                if isinstance(value, bool) or isinstance(big, bool):
                    continue
                if isinstance(value, (int, float)) and isinstance(big, (int, float)):
                    yield key, text, column, value, big


def main(paths):
    if len(paths) < 2 or len(paths) % 2:
        sys.exit(__doc__)
    lines = []
    for small_path, large_path in zip(paths[::2], paths[1::2]):
        with open(small_path) as f:
            small = json.load(f)
        with open(large_path) as f:
            large = json.load(f)
        a, b = tracks(small), tracks(large)
        print(f"\n{small.get('benchmark')}: {a} beside {b} "
              f"(load {small.get('machine', {}).get('loadAverage')} / {large.get('machine', {}).get('loadAverage')})")
        print(f"| table | row | figure | {a} | {b} | ratio |")
        print("|---|---|---|---:|---:|---:|")
        for key, text, column, value, big in pairs(small, large):
            ratio = big / value if value else None
            shown = f"{ratio:.2f}×" if ratio is not None else "–"
            print(f"| {key} | {text} | {column} | {value:.4g} | {big:.4g} | {shown} |")
            lines.append({"benchmark": small.get("benchmark"), "table": key, "row": text, "figure": column,
                          "small": value, "large": big, "ratio": ratio, "smallSize": a, "largeSize": b})
    print()
    for line in lines:
        print(json.dumps(line, ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
