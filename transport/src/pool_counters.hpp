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

// allocated - freed over every owner's line. Every freed count is read
// before any allocated one: a free always follows its allocation, so (on x86,
// where loads are not reordered) the sum is never below the truth; it errs
// high by the frees that happen meanwhile.
[[nodiscard]] inline std::int64_t in_use_of(const pool_layout::ClassCounters& cc) noexcept {
  std::int64_t freed = 0;
  std::int64_t allocated = 0;
  // SYNC: relaxed; counters (a snapshot, it orders nothing).
  for (const pool_layout::OwnerCounts& o : cc.by_owner) {
    freed += o.freed.load(std::memory_order_relaxed);
  }
  // SYNC: relaxed, as above.
  for (const pool_layout::OwnerCounts& o : cc.by_owner) {
    allocated += o.allocated.load(std::memory_order_relaxed);
  }
  return allocated - freed;
}

}  // namespace ferry::transport::detail
