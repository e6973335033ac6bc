#!/usr/bin/env bash
# scripts/eslint.sh: ESLint from Debian's `eslint` package (6.4 in bookworm) over the page's
# modules, Sources/ShelfServer/Web/files/*.js, with the repository's .eslintrc.json
# (eslint:recommended, browser globals, ES2022 modules; sw.js a service worker script). Any
# finding, warnings included, fails it; `make lint` runs it.
#
# Debian's eslint finds its parts (espree, eslint-scope, …) in /usr/share/nodejs, which Debian's
# own nodejs searches but a Node from elsewhere (NodeSource's) does not: NODE_PATH names it. Its
# parser, Debian's espree 9.4, reads everything the page writes (private methods and fields, ?.,
# ??, top-level await). Two rules of eslint:recommended are off in .eslintrc.json, as ESLint 6
# gets them wrong on such code:
# - require-atomic-updates: reports an assignment after an await to anything read before it
#   (a checkbox put back after a refusal, a form cleared after a save); ESLint itself took it out
#   of eslint:recommended for its false positives (eslint/eslint#11899, #12599).
# - no-dupe-class-members, in the modules with private methods only (the override's list: add a
#   module there when it gains one): ESLint 6 predates them, names every #method '' and reports
#   each after the first as a duplicate.
set -euo pipefail

ESLINT=${ESLINT:-/usr/bin/eslint}
if [ ! -x "$ESLINT" ]; then
  echo "eslint.sh: no $ESLINT: install Debian's eslint package (sudo apt-get install eslint)" >&2
  exit 1
fi
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
"$ESLINT" --no-eslintrc --config .eslintrc.json --max-warnings 0 Sources/ShelfServer/Web/files/*.js
echo "eslint.sh: no findings in Sources/ShelfServer/Web/files"
