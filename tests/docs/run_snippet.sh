#!/usr/bin/env bash
# Runs one code block of the documentation (<!-- check: run -->, extracted by
# scripts/doc-snippets.py) the way a reader would, against a real ferryd.
# Usage: run_snippet.sh sh|python|config FILE BUILD_DIR SOURCE_DIR
#
# - A fresh domain "ft<pid>-docs" (the test suite's naming, so that
#   tests/support/cleanup_test_domains.sh recognises leftovers) in a fresh
#   runtime directory, served by ferryd with tests/docs/docs.yaml: the topics
#   the pages use. FERRY_DOMAIN and FERRY_RUNTIME_DIR point there.
# - The block runs in a scratch directory where build/bin, build/python and
#   examples are the real ones, so its paths are the reader's.
# - Shell blocks: every domain a block chooses (FERRY_DOMAIN=NAME,
#   --domain NAME) becomes "ft<pid>-docs-NAME", so that it cannot meet a
#   reader's own domain; a bare `wait` fails when a background job failed;
#   `set -euo pipefail` holds.
# - Afterwards every ferryd the run started is stopped (by the pid files of
#   the runtime directory) and every domain it used is cleaned. The exit
#   status is the block's.
set -euo pipefail
kind="$1"
file="$2"
build="$3"
src="$4"
bin="$build/bin"

tag="ft$$-docs"
export FERRY_RUNTIME_DIR
FERRY_RUNTIME_DIR=$(mktemp -d "/tmp/ferry-test-$tag.XXXXXX")
export FERRY_DOMAIN="$tag"
work="$FERRY_RUNTIME_DIR/work"
mkdir -p "$work/build"
ln -s "$bin" "$work/build/bin"
[ -d "$build/python" ] && ln -s "$build/python" "$work/build/python"
ln -s "$src/examples" "$work/examples"

# Stops every ferryd of the runtime directory, waits until each is gone, and
# removes what any domain of the run left.
cleanup() {
  local pidfile pid domain
  for pidfile in "$FERRY_RUNTIME_DIR"/*.pid; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    case "$pid" in '' | *[!0-9]*) continue ;; esac
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  for domain in "$FERRY_DOMAIN" $(cd /dev/shm && ls -d "ferry.$tag"* 2>/dev/null |
                                   sed -n "s/^ferry\.\($tag[A-Za-z0-9_-]*\)\..*/\1/p" | sort -u); do
    "$bin/ferry" clean --domain "$domain" >/dev/null 2>&1 || true
  done
  rm -rf "$FERRY_RUNTIME_DIR"
}
trap cleanup EXIT

"$bin/ferryd" --config "$src/tests/docs/docs.yaml" --domain "$FERRY_DOMAIN" --log-level warn

cd "$work"
case "$kind" in
  python)
    PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$file"
    ;;
  sh)
    script="$FERRY_RUNTIME_DIR/snippet.sh"
    {
      echo 'set -euo pipefail'
      # A bare `wait` waits for every background job and fails if one did.
      echo 'wait() { if [ $# -eq 0 ]; then local p rc=0; for p in $(jobs -p); do builtin wait "$p" || rc=$?; done; return $rc; fi; builtin wait "$@"; }'
      sed -E -e "s/FERRY_DOMAIN=([A-Za-z0-9_-]+)/FERRY_DOMAIN=$tag-\1/g" \
             -e "s/--domain ([A-Za-z0-9_-]+)/--domain $tag-\1/g" "$file"
    } > "$script"
    bash "$script"
    ;;
  config)
    "$bin/ferry" config check "$file"
    ;;
  *)
    echo "run_snippet.sh: unknown kind '$kind' (sh, python or config)" >&2
    exit 2
    ;;
esac
