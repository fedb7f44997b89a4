#!/usr/bin/env bash
# Builds the documentation:
#   1. the CLI reference (docs/cli/reference.md, not kept in git) from the
#      programs' own --help, so it never drifts from them;
#   2. the MkDocs site, `mkdocs build --strict` (a broken link or a page
#      missing from the nav fails), into build/site/, and a check of every
#      link to a heading (Debian's MkDocs does not check anchors);
#   3. the API reference of the public C++ headers (and of the C API's,
#      core/c/include, where it exists) with Doxygen into build/api/html/:
#      an undocumented public name is a warning, and warnings fail the build.
# Its packages (mkdocs, mkdocs-material, doxygen, matplotlib for the bench
# plots) come from scripts/install-deps.sh --for docs. The code blocks of the
# pages are built and run by the test suite (tests/docs/), not here.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --for docs
# Debian's Python: the one MkDocs is installed for (a pyenv or venv python3
# on PATH would not have it).
python=/usr/bin/python3

# Only the two programs whose help the reference shows. A configured build/
# is built as it is (its options kept); a fresh one is configured without the
# test suite but with the benchmarks, so that `ferry bench` is in the help.
if [ -f build/CMakeCache.txt ]; then
  cmake --build build -j "$(nproc)" --target ferry_cli --target ferryd
else
  scripts/build.sh --no-tests --target ferry_cli --target ferryd
fi

echo "== CLI reference from --help"
"$python" scripts/cli-reference.py build/bin docs/cli/reference.md

echo "== mkdocs build --strict"
"$python" -m mkdocs build --strict --quiet --site-dir build/site
"$python" scripts/doc-links.py .

echo "== Doxygen: the public headers"
inputs="core/include/ferry"
[ -d core/c/include ] && inputs="$inputs core/c/include"
mkdir -p build/api
{ cat Doxyfile; echo "INPUT = $inputs"; } | doxygen -
echo "docs: site in build/site/index.html, API reference in build/api/html/index.html"
