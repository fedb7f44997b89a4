#include "queued_chunks.hpp"

#include <chrono>
#include <cstring>

#include "ferry/discovery/objects.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/ring_peek.hpp"
#include "ferry/transport/segment.hpp"
#include "ferry/transport/slot_format.hpp"
#include "queue_counters.hpp"

namespace ferry::cli {

namespace {

using transport::kPooledSlotBytes;
using transport::kSlotPooled;

}  // namespace

std::vector<QueuedChunk> queued_chunks(const std::vector<discovery::TopicInfo>& topics) {
  std::vector<QueuedChunk> out;
  for (const auto& t : topics) {
    for (const auto& q : t.queues) {
      auto ring = open_ring_read_only(q.ring_shm);
      if (!ring) continue;
      for (const auto& m :
           transport::peek_ring(ring->payload(), ring->payload_size(), kPooledSlotBytes)) {
        const auto pooled =
            m.length == kPooledSlotBytes ? transport::read_pooled(m.prefix, m.flags) : std::nullopt;
        if (pooled) out.push_back({t.name, transport::ChunkRef::unpack(pooled->ref)});
      }
    }
  }
  return out;
}

}  // namespace ferry::cli
