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
        if (m.flags != kSlotPooled || m.length != kPooledSlotBytes ||
            m.prefix.size() < sizeof(std::uint64_t)) {
          continue;
        }
        std::uint64_t packed = 0;
        std::memcpy(&packed, m.prefix.data(), sizeof packed);
        out.push_back({t.name, transport::ChunkRef::unpack(packed)});
      }
    }
  }
  return out;
}

}  // namespace ferry::cli
