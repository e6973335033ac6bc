#!/usr/bin/env bash
# scripts/coverage.sh BUILD: line coverage per module (Sources/MODULE) of the suite `make coverage`
# ran in BUILD, from the toolchain's llvm-profdata and llvm-cov: the profiles of the test bundle
# and of every `shelf` and `shelf-bench` child the tests ran, merged, over those three binaries.
set -euo pipefail
build=${1:-.build/coverage}
cd "$(dirname "$0")/.."
tools=$(dirname "$(readlink -f "$(command -v swift)")")
products=$(dirname "$(find "$build" -maxdepth 4 -name 'ShelfPackageTests.xctest' | head -1)")
if [ ! -d "$products/codecov" ]; then
  echo "coverage.sh: no test bundle or profiles under $build; run make coverage" >&2
  exit 1
fi
# swift test merges its own profile only when every test passed; merge them all here either way.
profile="$products/codecov/merged.profdata"
find "$products/codecov" -name '*.profraw' -print0 | xargs -0 "$tools/llvm-profdata" merge --failure-mode=warn -sparse -o "$profile"
"$tools/llvm-cov" export -summary-only -instr-profile "$profile" "$products/ShelfPackageTests.xctest" \
  -object "$products/shelf" -object "$products/shelf-bench" -ignore-filename-regex '(\.build|Tests)/' |
  python3 -c '
import json, sys, re, collections
files = json.load(sys.stdin)["data"][0]["files"]
lines = collections.defaultdict(lambda: [0, 0])
for f in files:
    m = re.search(r"/Sources/([^/]+)/", f["filename"])
    if not m: continue
    s = f["summary"]["lines"]
    lines[m.group(1)][0] += s["covered"]; lines[m.group(1)][1] += s["count"]
print("| module | lines | covered |")
print("|---|---:|---:|")
total = [0, 0]
for module in sorted(lines):
    c, n = lines[module]; total[0] += c; total[1] += n
    print(f"| {module} | {n} | {100.0 * c / max(n, 1):.1f} % |")
print(f"| all | {total[1]} | {100.0 * total[0] / max(total[1], 1):.1f} % |")
'
