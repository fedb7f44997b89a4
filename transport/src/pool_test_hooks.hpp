#pragma once
// Tests only (a private header: tests reach it through transport/src): the
// pool's operations stopped right after one of their steps, leaving shared
// memory exactly as a kill -9 of the caller at that point would. The steps
// are the crash table's (docs/design/pool.md); the production entry points run the same
// code with a hook that never stops.

#include <cstddef>
#include <cstdint>
#include <expected>

#include "ferry/transport/pool.hpp"

namespace ferry::transport::detail {

// The rows of the crash table (docs/design/pool.md), by operation.
enum class PoolCrashStep : std::uint8_t {
  None,  // run to the end
  // allocate
  AllocateHintCleared,    // 1 hint cleared
  AllocateClaimed,        // 2 Claimed(D)
  AllocateHolderWritten,  // 3 holder written, still Claimed
  AllocateLive,           // 4 Live, D's count line not updated
  // add_ref, give (when a new holder slot is needed)
  SlotReserving,      // 1 slot Reserving
  SlotHolderWritten,  // 2 holder word written, still Reserving
  // release, revoke, settle_pending (when a count reaches 0)
  HolderClosed,  // 1 holder closed, naming D as closer, slot still Live
  ChunkFreed,    // 2 chunk Free(g+1), hint not set
  // add_ref, give when the chain has no Empty holder slot: a new overflow
  // node (then slot_reserving, slot_holder_written for the link slot)
  NodeHintCleared,  // 1 the node's hint cleared
  NodeClaimed,      // 2 node Claimed(D), its holder and origin written, not linked
  NodeLinked,       // 3 link slot Live, the node still Claimed(D)
  // a close that empties an overflow node
  NodeFreed,   // 1 node Free(g+1), hint not set, the link to it still open
  LinkClosed,  // 2 the link closed naming D, slot still Live
};

// The crash-point hook of the production entry points: never stops (the
// checks compile away).
struct NeverStop {
  constexpr bool operator()(PoolCrashStep /*step*/) const noexcept { return false; }
};
// PoolTestHooks': stops right after occurrence `skip` (0: the first) of
// `step` (a close can free several nodes of a chain, one after the other).
struct StopAt {
  PoolCrashStep step;
  unsigned skip = 0;
  bool operator()(PoolCrashStep k) noexcept { return k == step && skip-- == 0; }
};

// Each is defined beside the operation it stops (pool_allocate.cpp,
// pool_holders.cpp, pool_recovery.cpp).
// `occurrence`: which time the operation reaches the step (0: the first).
struct PoolTestHooks {
  static std::expected<ChunkRef, PoolError> allocate(Pool& pool, std::size_t size, OwnerId owner,
                                                     PoolCrashStep stop_after) noexcept;
  static std::expected<void, PoolError> add_ref(Pool& pool, ChunkRef ref, OwnerId owner,
                                                std::uint32_t n, PoolCrashStep stop_after) noexcept;
  static std::expected<void, PoolError> give(Pool& pool, ChunkRef ref, OwnerId from, OwnerId to,
                                             std::uint32_t n, PoolCrashStep stop_after) noexcept;
  static std::expected<void, PoolError> release(Pool& pool, ChunkRef ref, OwnerId owner,
                                                PoolCrashStep stop_after,
                                                unsigned occurrence = 0) noexcept;
  static std::expected<void, PoolError> revoke(Pool& pool, ChunkRef ref, OwnerId from, OwnerId to,
                                               PoolCrashStep stop_after,
                                               unsigned occurrence = 0) noexcept;
  static std::uint64_t settle_pending(Pool& pool, OwnerId to, OwnerId from,
                                      PoolCrashStep stop_after, unsigned occurrence = 0) noexcept;
};

}  // namespace ferry::transport::detail
