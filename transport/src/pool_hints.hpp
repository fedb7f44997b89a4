#pragma once
// Private to the pool: the free hints (one bit per chunk, and per overflow
// node: "maybe free") and the one protocol that keeps a free node findable:
// a freer sets the bit (hint_freed), a scanner clears it and then claims
// (Pool::claim_hinted). docs/design/pool.md, "Finding a free chunk".

#include <atomic>
#include <bit>
#include <cstdint>
#include <utility>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/pool_layout.hpp"
#include "pool_counters.hpp"
#include "pool_test_hooks.hpp"

namespace ferry::transport::detail {

// Sets the hint bit of a node just freed, unless it is set already.
inline void hint_freed(std::atomic<std::uint64_t>& word, std::uint64_t bit) noexcept {
  // A bit already set is left alone: in a steady stream nobody clears it
  // (allocate_again claims without it), so the word stays shared in every
  // core's cache instead of moving to each freer's core with a locked or.
  // SYNC: seq_cst, pairs with the seq_cst fetch_and of a scanner
  // (claim_hinted) and the seq_cst operations on the state word (the free
  // before this load; the scanner's load or CAS of it after its fetch_and):
  // if we see the bit still set, the scanner's clear comes later in the
  // single total order S, so its state read (also seq_cst, after its clear)
  // sees our free and it claims the chunk, or puts the bit back; if its
  // state read came before our free in S, its clear came before this load
  // too and we see the bit clear and set it.
  if ((word.load(std::memory_order_seq_cst) & bit) == 0) {
    // SYNC: relaxed: setting a hint orders nothing (claimers synchronise
    // through the state word); the load above decided it was needed.
    word.fetch_or(bit, std::memory_order_relaxed);
  }
}

}  // namespace ferry::transport::detail

namespace ferry::transport {

inline std::expected<std::uint32_t, PoolError> Pool::claim(pool_layout::ChunkMeta& m, OwnerId owner,
                                                           std::uint64_t guess) noexcept {
  // SYNC: seq_cst, for the hint protocol (hint_freed, above): a
  // scanner reads the state word after clearing the hint bit, and on ARMv8.0
  // (no RCsc-to-RCpc relaxation, loads may be satisfied early) a relaxed or
  // acquire load could read a state older than a free that precedes our
  // clear in the total order S: the chunk would stay Free with its bit
  // clear. A seq_cst load is in S after our clear: it sees that free or a
  // later state. With a guess (the Free word we expect) the CAS goes first:
  // one transfer of the line from the core that freed the chunk instead of
  // a load and then a CAS.
  std::uint64_t s = guess != 0 ? guess : m.state.load(std::memory_order_seq_cst);
  for (std::uint32_t attempt = 0;; ++attempt) {
    if (!pool_layout::state::well_formed(s)) {
      detail::bump(counters_->corrupt);
      return 0;
    }
    if (pool_layout::state::mode(s) != pool_layout::state::kModeFree || attempt == 8) return 0;
    const std::uint32_t gen = pool_layout::state::generation(s);
    // SYNC: acq_rel on success: acquire pairs with the release CAS that
    // freed the node (every former holder is done with the payload before
    // we hand it out). On failure `s` is reloaded: if the node is still
    // Free (our first load was an older Free), try again. seq_cst both ways
    // (free on x86): a scanner's claim, success or failure, is in the total
    // order with the hint bit it cleared before (see hint_freed).
    if (m.state.compare_exchange_strong(s, pool_layout::state::make_claimed(gen, owner),
                                        std::memory_order_seq_cst, std::memory_order_seq_cst)) {
      return gen;
    }
  }
}

template <class TryClaim, class Stop>
std::expected<std::pair<std::uint32_t, std::uint32_t>, PoolError> Pool::claim_hinted(
    std::atomic<std::uint64_t>* hints, std::uint32_t words, std::uint32_t count,
    std::uint32_t& cursor_word, pool_layout::ChunkMeta* meta, detail::PoolCrashStep hint_step,
    Stop& stop, TryClaim try_claim) noexcept {
  std::atomic_ref<std::uint32_t> cursor(cursor_word);
  // SYNC: relaxed; a private search hint of this handle.
  std::uint32_t start = cursor.load(std::memory_order_relaxed);
  if (start >= words) start = 0;
  for (std::uint32_t k = 0; k < words; ++k) {
    std::uint32_t w = start + k;
    if (w >= words) w -= words;
    std::atomic<std::uint64_t>& word = hints[w];
    // SYNC: relaxed: hints are candidates only; the claim CAS on the node's
    // state word is what orders (and decides) anything.
    std::uint64_t bits = word.load(std::memory_order_relaxed);
    // Bounded: each round clears one bit of `bits` or of the shared word;
    // freers setting bits meanwhile cannot keep us here beyond 128 rounds.
    for (std::uint32_t round = 0; bits != 0 && round < 128; ++round) {
      const unsigned b = static_cast<unsigned>(std::countr_zero(bits));
      const std::uint64_t bit = std::uint64_t{1} << b;
      // SYNC: seq_cst, see hint_freed (above). Clearing the bit
      // first makes us (almost always) the only candidate for this node.
      // Only the old value of this one bit is used, so x86 does it with one
      // `lock btr` instead of a CAS loop (seq_cst is the same instruction).
      const bool was_set = (word.fetch_and(~bit, std::memory_order_seq_cst) & bit) != 0;
      if (!was_set) {
        // Someone else took it: look at what is there now.
        // SYNC: relaxed, a hint as above.
        bits = word.load(std::memory_order_relaxed) & ~bit;
        continue;
      }
      bits &= ~bit;
      const std::uint32_t i = w * 64 + b;
      if (i >= count) {
        detail::bump(counters_->corrupt);  // a hint beyond the class
        continue;
      }
      if (stop(hint_step)) return std::unexpected(PoolError::Aborted);
      auto claimed = try_claim(i);
      if (!claimed) return std::unexpected(claimed.error());
      if (*claimed == 0) {
        // Not free (a stale hint), or lost to another claimer. If it is Free
        // after all (we gave up racing for it), put its hint back.
        // SYNC: seq_cst, as claim's load (see hint_freed): in
        // the total order after our clear, so a free that came before it is
        // seen here, and a free after it sees our clear and re-hints.
        const std::uint64_t now = meta[i].state.load(std::memory_order_seq_cst);
        if (pool_layout::state::well_formed(now) &&
            pool_layout::state::mode(now) == pool_layout::state::kModeFree) {
          word.fetch_or(bit, std::memory_order_relaxed);
        }
        continue;
      }
      // SYNC: relaxed; the search hint again (see its load above): orders nothing.
      if (w != start) cursor.store(w, std::memory_order_relaxed);
      return std::pair{i, *claimed};
    }
  }
  return std::unexpected(PoolError::Exhausted);
}

}  // namespace ferry::transport
