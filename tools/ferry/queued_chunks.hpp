#pragma once
// The pool chunks waiting in the topics' queues: each ring is mapped
// read-only and the pool references in its waiting slots are copied out.
// Nothing is written to a ring; publishers and subscribers do not notice.

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/discovery/messages.hpp"
#include "ferry/transport/pool.hpp"

namespace ferry::cli {

struct QueuedChunk {
  std::string topic;
  transport::ChunkRef ref;
};

// Every pooled sample queued in the topics' rings now (a snapshot; a ring
// removed meanwhile is skipped).
[[nodiscard]] std::vector<QueuedChunk> queued_chunks(
    const std::vector<discovery::TopicInfo>& topics);

}  // namespace ferry::cli
