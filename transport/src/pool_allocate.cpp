// Allocation: a free chunk of the smallest class that fits, claimed by CAS
// (the chunk this handle freed or allocated last first, then the hints).
#include <bit>

#include "ferry/transport/pool.hpp"
#include "pool_counters.hpp"
#include "pool_flatten.hpp"
#include "pool_hints.hpp"
#include "pool_prefetch.hpp"
#include "pool_test_hooks.hpp"

namespace ferry::transport {

using namespace pool_layout;
using namespace detail;  // the pool's private helpers (pool_*.hpp beside this file)
namespace st = pool_layout::state;
namespace hw = pool_layout::holder;

template <class Stop>
std::expected<ChunkRef, PoolError> Pool::allocate_impl(std::size_t size, OwnerId owner,
                                                       Stop stop) noexcept {
  if (owner == kNoOwner) return std::unexpected(PoolError::InvalidOwner);
  std::uint32_t first = class_count_;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    if (classes_[c].chunk_size >= size) {
      first = c;
      break;
    }
  }
  if (first == class_count_) return std::unexpected(PoolError::TooLarge);
  for (std::uint32_t c = first; c < class_count_; ++c) {
    auto r = allocate_from(c, owner, stop);
    if (r) {
      if (c != first) bump(classes_[c].counters->fallbacks);
      return r;
    }
    if (r.error() != PoolError::Exhausted) return r;
    bump(classes_[c].counters->exhausted);
  }
  return std::unexpected(PoolError::Exhausted);
}

template <class Stop>
std::expected<std::uint32_t, PoolError> Pool::make_loan(pool_layout::ChunkMeta& m, OwnerId owner,
                                                        std::uint32_t gen, Stop& stop) noexcept {
  if (stop(PoolCrashStep::AllocateClaimed)) return std::unexpected(PoolError::Aborted);
  // While Claimed(gen, owner) nobody else writes this chunk's words: other
  // claimers skip it, references to this generation are refused until it is
  // Live, and reclaim_owner undoes the claim only when the owner's process is
  // gone (with process_gone false it leaves it: a node declared dead while
  // merely stopped may wake up right here). So plain stores.
  hw::Fields f;
  f.owner = owner;
  f.held = 1;
  // SYNC: relaxed (the tag of the slot's previous holder word); this load and
  // the store below are published by the release store of Live below.
  f.tag = hw::decode(m.holders[0].load(std::memory_order_relaxed)).tag + 1;
  m.holders[0].store(hw::encode(f), std::memory_order_relaxed);
  // SYNC: relaxed; published by the release store of Live below (stats only).
  m.origin.store(std::uint64_t{owner} | (std::uint64_t{gen} << 32), std::memory_order_relaxed);
  if (stop(PoolCrashStep::AllocateHolderWritten)) return std::unexpected(PoolError::Aborted);
  // SYNC: release, pairs with the acquire loads of the state word in every
  // operation that then reads holders[0].
  m.state.store(st::make_live_one(gen), std::memory_order_release);
  return gen;
}

void Pool::count_allocation(const ClassView& cv, std::uint32_t c, std::uint32_t index,
                            std::uint32_t generation, OwnerId owner, bool searched) noexcept {
  // SYNC: relaxed; a counter, on the allocator's own line. It happens
  // before the free of this chunk (every later change of the chunk is an
  // acq_rel CAS of ours or of someone we handed the reference to), which is
  // what in_use_of's ordering needs (pool_counters.hpp).
  cv.counters->by_owner[owner % kOwnerCountLines].allocated.fetch_add(1, std::memory_order_relaxed);
  if (searched) {
    // The class grew into a chunk found through the hints: raise the
    // high-water mark (by CAS) to the sum of every owner's line.
    const std::int64_t now = in_use_of(*cv.counters);
    // SYNC: relaxed; a counter.
    std::int64_t peak = cv.counters->peak_in_use.load(std::memory_order_relaxed);
    while (now > peak &&
           !cv.counters->peak_in_use.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  // SYNC: relaxed; a private guess of this handle (threads share it): the
  // chunk, and the generation it will have once Free again.
  std::atomic_ref<std::uint64_t>(last_[c]).store(
      (std::uint64_t{index} + 1) << 32 | st::next_generation(generation),
      std::memory_order_relaxed);
}

template <class Stop>
std::expected<ChunkRef, PoolError> Pool::allocate_again(std::uint32_t c, std::uint64_t known,
                                                        OwnerId owner, Stop stop) noexcept {
  const ClassView& cv = classes_[c];
  const std::uint64_t index = (known >> 32) - 1;
  if (known == 0 || index >= cv.count) return std::unexpected(PoolError::Exhausted);
  // A chunk this handle knows, Free with generation `known` if nobody took
  // it since. Claiming it directly leaves the class's hint word alone: its
  // bit stays set (a stale hint once we hold the chunk, which is allowed: a
  // hint is only a candidate, the next scanner clears it after one failed
  // claim), so the word is not written on every loan.
  if (stop(PoolCrashStep::AllocateHintCleared))
    return std::unexpected(PoolError::Aborted);  // nothing done yet: nothing to repair
  ChunkMeta& m = cv.meta[index];
  // The loan's first writes go to the payload the last reader (or writer)
  // may have in its cache: fetch its head for writing while the claim's CAS
  // fetches the metadata.
  prefetch_head(cv.payload + static_cast<std::size_t>(index) * cv.chunk_size, cv.chunk_size, true);
  auto claimed = claim(m, owner, st::make_free(static_cast<std::uint32_t>(known)));
  if (!claimed) return std::unexpected(claimed.error());
  if (*claimed == 0) return std::unexpected(PoolError::Exhausted);  // in use: try another
  auto live = make_loan(m, owner, *claimed, stop);
  if (!live) return std::unexpected(live.error());
  if (stop(PoolCrashStep::AllocateLive)) return std::unexpected(PoolError::Aborted);
  count_allocation(cv, c, static_cast<std::uint32_t>(index), *claimed, owner, false);
  return ChunkRef::of(c, static_cast<std::uint32_t>(index), *claimed);
}

template <class Stop>
std::expected<ChunkRef, PoolError> Pool::allocate_from(std::uint32_t c, OwnerId owner,
                                                       Stop stop) noexcept {
  // First the chunk this handle freed last: its metadata line is still in
  // our cache (in a ping-pong each side frees the other's sample, then loans
  // its answer). Then the one it allocated last: in a one-way stream the
  // subscriber has freed it by now. Only then the hints.
  // SYNC: relaxed; private guesses of this handle (threads share them).
  std::atomic_ref<std::uint64_t> freed(freed_[c]);
  const std::uint64_t mine = freed.load(std::memory_order_relaxed);
  if (mine != 0) {
    freed.store(0, std::memory_order_relaxed);  // tried once: a claim of ours, or taken
    if (auto r = allocate_again(c, mine, owner, stop); r || r.error() != PoolError::Exhausted)
      return r;
  }
  const std::uint64_t last =
      std::atomic_ref<std::uint64_t>(last_[c]).load(std::memory_order_relaxed);
  if (last != mine) {
    if (auto r = allocate_again(c, last, owner, stop); r || r.error() != PoolError::Exhausted)
      return r;
  }
  const ClassView& cv = classes_[c];
  auto found = claim_hinted(cv.hints, cv.hint_words, cv.count, cursor_[c], cv.meta,
                            PoolCrashStep::AllocateHintCleared, stop,
                            [&](std::uint32_t i) -> std::expected<std::uint32_t, PoolError> {
                              auto gen = claim(cv.meta[i], owner, 0);
                              if (!gen || *gen == 0) return gen;
                              return make_loan(cv.meta[i], owner, *gen, stop);
                            });
  if (!found) return std::unexpected(found.error());
  const auto [i, gen] = *found;
  if (stop(PoolCrashStep::AllocateLive)) return std::unexpected(PoolError::Aborted);
  count_allocation(cv, c, i, gen, owner, true);
  return ChunkRef::of(c, i, gen);
}

FERRY_FLATTEN std::expected<ChunkRef, PoolError> Pool::allocate(std::size_t size,
                                                                OwnerId owner) noexcept {
  return allocate_impl(size, owner, NeverStop{});
}

namespace detail {

std::expected<ChunkRef, PoolError> PoolTestHooks::allocate(Pool& pool, std::size_t size,
                                                           OwnerId owner,
                                                           PoolCrashStep stop_after) noexcept {
  return pool.allocate_impl(size, owner, StopAt{stop_after});
}

}  // namespace detail

}  // namespace ferry::transport
