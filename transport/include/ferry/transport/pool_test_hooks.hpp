#pragma once
// Tests only: the pool's operations stopped right after one of their steps,
// leaving shared memory exactly as a kill -9 of the caller at that point
// would (the crash table in pool.hpp names the steps). The production entry
// points run the same code with a hook that is constant false.

#include <cstddef>
#include <cstdint>
#include <expected>

#include "ferry/transport/pool.hpp"

namespace ferry::transport::detail {

struct PoolTestHooks {
  // allocate: 1 hint bit cleared, 2 chunk Claimed, 3 holder written, 4 chunk Live
  static std::expected<ChunkRef, PoolError> allocate(Pool& pool, std::size_t size, OwnerId owner,
                                                     int stop_after) noexcept;
  // add_ref, give (when a new holder slot is needed): 1 slot Reserving, 2 holder written
  static std::expected<void, PoolError> add_ref(Pool& pool, ChunkRef ref, OwnerId owner, std::uint32_t n,
                                                int stop_after) noexcept;
  static std::expected<void, PoolError> give(Pool& pool, ChunkRef ref, OwnerId from, OwnerId to,
                                             std::uint32_t n, int stop_after) noexcept;
  // release, revoke, settle_pending (when a count reaches 0): 1 holder closed,
  // 2 chunk freed (its free hint not yet set)
  static std::expected<void, PoolError> release(Pool& pool, ChunkRef ref, OwnerId owner, int stop_after) noexcept;
  static std::expected<void, PoolError> revoke(Pool& pool, ChunkRef ref, OwnerId from, OwnerId to,
                                               int stop_after) noexcept;
  static std::uint64_t settle_pending(Pool& pool, OwnerId to, OwnerId from, int stop_after) noexcept;
};

}  // namespace ferry::transport::detail
