#pragma once
// Private to the pool: its event counters in shared memory (pool_layout.hpp),
// written by many processes, read by read_pool_stats.

#include <atomic>
#include <cstdint>

#include "ferry/transport/pool_layout.hpp"

namespace ferry::transport::detail {

inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
  // SYNC: relaxed; a counter, it orders nothing.
  counter.fetch_add(n, std::memory_order_relaxed);
}

// allocated - freed over every owner's line, never below the truth (a
// reader must not see a free without its allocation; it errs high by the
// frees that happen meanwhile). Every freed count is read before any
// allocated one, with an acquire fence between: a free's count is added
// with release after the free (Pool::after_free), and the allocation's count
// happens before the free (the allocator's next change of the chunk is an
// acq_rel CAS, and the free acquires the chain of them); so a reader that
// sees a free's count synchronises with it through the fence, and its
// later loads see the allocation's count. (Load order alone, which x86
// keeps, is not enough on ARM or POWER: the allocated loads could be
// satisfied first.)
[[nodiscard]] inline std::int64_t in_use_of(const pool_layout::ClassCounters& cc) noexcept {
  std::int64_t freed = 0;
  std::int64_t allocated = 0;
  // SYNC: relaxed loads, then the acquire fence below: pairs with the
  // release fetch_add of the freed counts in Pool::after_free.
  for (const pool_layout::OwnerCounts& o : cc.by_owner) {
    freed += o.freed.load(std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  // SYNC: relaxed; ordered after the freed loads by the fence above.
  for (const pool_layout::OwnerCounts& o : cc.by_owner) {
    allocated += o.allocated.load(std::memory_order_relaxed);
  }
  return allocated - freed;
}

}  // namespace ferry::transport::detail
