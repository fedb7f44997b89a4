#pragma once
// This process's mapping of the domain's loaned-memory pool, shared by the
// ports of one node (and kept alive by samples that outlive them), with the
// node's owner id: every reference the node holds is attributed to it, so
// ferryd can reclaim them all if the process dies.

#include <cstdint>
#include <memory>
#include <string>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::detail {

struct DomainPoolView {
  transport::Segment segment;
  transport::Pool pool;
  transport::OwnerId owner;

  // Throws std::runtime_error naming the object when it cannot be opened.
  static std::shared_ptr<DomainPoolView> open(const std::string& domain, transport::OwnerId owner);
};

// What a ring slot carries for a pooled sample (flags == kSlotPooled).
inline constexpr std::uint32_t kSlotInline = 0;
inline constexpr std::uint32_t kSlotPooled = 1;
struct PooledSlot {
  std::uint64_t ref;   // ChunkRef::pack()
  std::uint64_t size;  // bytes of the sample inside the chunk
};
static_assert(sizeof(PooledSlot) == 16);

}  // namespace ferry::detail
