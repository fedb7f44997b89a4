#!/usr/bin/env bash
# Fails when one of the pool's per-sample operations (allocate, transfer,
# accept, resolve, release: FERRY_FLATTEN, transport/src/pool_flatten.hpp)
# calls a helper instead of holding it inline. Out of line, the helpers'
# std::expected results cross the stack with a store-forwarding stall each:
# inlining them took a loan's pool cycle from about 210 ns to 110-160 ns
# (docs/design/pool.md, Cost). A compiler upgrade, a lost attribute or a
# lost -fno-semantic-interposition is caught here.
# Usage: check_pool_inlined.sh LIBFERRY_TRANSPORT_ARCHIVE
set -euo pipefail
archive="$1"
listing=$(objdump -dr -C --no-show-raw-insn "$archive")

# Calls that may stay: the overflow chain's (a chunk with more holders than
# its own slots), which a one-subscriber sample never takes.
allowed='detail::follow_link\(|Pool::unlink<'

status=0
for op in 'Pool::allocate(unsigned long, unsigned short)' \
  'Pool::transfer(ferry::transport::ChunkRef, unsigned short, unsigned short)' \
  'Pool::accept(ferry::transport::ChunkRef, unsigned short, unsigned short)' \
  'Pool::resolve(ferry::transport::ChunkRef) const' \
  'Pool::release(ferry::transport::ChunkRef, unsigned short)'; do
  # The function's body: from its label to the next label. A call's target
  # is on the relocation line after it (in an archive, unlinked) or in the
  # instruction itself (a local function).
  body=$(awk -v f="<ferry::transport::$op>:" '
    /^[0-9a-f]+ </ { inside = index($0, f) > 0; next }
    inside { print }' <<<"$listing")
  if [ -z "$body" ]; then
    echo "FAIL: $archive defines no ferry::transport::$op" >&2
    status=1
    continue
  fi
  calls=$(awk '
    /\tcall / { pending = $0; next }
    pending != "" {
      if ($0 ~ /R_X86_64_PLT32|R_X86_64_PC32/) { sub(/^.*R_X86_64_P[A-Z0-9]*[ \t]+/, ""); print }
      else print pending
      pending = ""
    }' <<<"$body" | grep -vE "$allowed" || true)
  # A call to a label inside the function itself is not a call out.
  calls=$(grep -vF "<ferry::transport::$op+" <<<"$calls" | sed '/^$/d' || true)
  if [ -n "$calls" ]; then
    echo "FAIL: ferry::transport::$op calls out of line:" >&2
    echo "$calls" >&2
    status=1
  fi
done
# transfer hands the chunk's lines to the shared cache for the receiver
# (docs/design/hot-path.md, Demoting what the reader reads next).
transfer=$(awk -v f="<ferry::transport::Pool::transfer(ferry::transport::ChunkRef, unsigned short, unsigned short)>:" '
  /^[0-9a-f]+ </ { inside = index($0, f) > 0; next }
  inside { print }' <<<"$listing")
if [ "$(grep -c cldemote <<<"$transfer" || true)" -lt 2 ]; then
  echo "FAIL: ferry::transport::Pool::transfer does not demote the chunk's two lines (cldemote)" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "pool inlined: allocate, transfer, accept, resolve and release call no helper; transfer demotes"
exit "$status"
