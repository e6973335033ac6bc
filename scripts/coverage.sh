#!/usr/bin/env bash
# scripts/coverage.sh BUILD: line coverage per module (Sources/MODULE) of the suite `make coverage`
# ran in BUILD, from the toolchain's llvm-cov over the test bundle and its profile.
set -euo pipefail
build=${1:-.build/coverage}
cd "$(dirname "$0")/.."
llvm_cov=$(dirname "$(command -v swift)")/llvm-cov
profile=$(find "$build" -name default.profdata -path '*codecov*' | head -1)
bundle=$(find "$build" -maxdepth 3 -name 'ShelfPackageTests.xctest' | head -1)
if [ -z "$profile" ] || [ -z "$bundle" ]; then
  echo "coverage.sh: no profile or test bundle under $build; run make coverage" >&2
  exit 1
fi
"$llvm_cov" export -summary-only -instr-profile "$profile" "$bundle" -ignore-filename-regex '(\.build|Tests)/' |
  python3 -c '
import json, sys, re, collections
data = json.load(sys.stdin)["data"][0]["files"]
lines = collections.defaultdict(lambda: [0, 0])
for f in data:
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
