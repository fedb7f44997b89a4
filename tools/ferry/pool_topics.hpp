#pragma once
// Which topics hold the pool's chunks (`ferry pool`). Each live chunk is
// attributed to one topic when the data allows, else to an honest group:
//   1. queued: a chunk whose reference waits in a ring belongs to that
//      ring's topic (exact);
//   2. held (a loan, history, samples taken and kept): the topics the chunk
//      can come from are those its allocating node publishes, narrowed to
//      those every other holder node subscribes to; of these, the topics
//      known to travel through the pool (bytes topics, samples above the
//      inline limit, or pooled samples queued now) win when there are any,
//      as a smaller topic reaches the pool only through an explicit loan.
//      One topic left: that topic. Several: a group "(node X, topics a, b)"
//      that does not pretend to split them.
// Chunks whose nodes ferryd no longer lists (being reclaimed) are a group
// without topics.

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/discovery/messages.hpp"
#include "ferry/transport/pool.hpp"
#include "queued_chunks.hpp"

namespace ferry::cli {

struct TopicChunks {
  std::string topic;                    // empty: a group the data cannot split (candidates)
  std::vector<std::string> candidates;  // a group's possible topics (sorted; may be empty)
  std::vector<std::string>
      nodes;  // names of the nodes keeping them (queued to, or holding), sorted
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;   // the chunks' sizes (pool memory, not sample bytes)
  std::uint64_t queued = 0;  // waiting in at least one of the topic's queues
  std::uint64_t held = 0;    // in no queue, held by a node (chunks = queued + held)

  // The topic, or "(node X, topics a, b)" for a group.
  [[nodiscard]] std::string label() const;
};

// Largest first (then by label).
[[nodiscard]] std::vector<TopicChunks> chunks_by_topic(
    const std::vector<transport::LiveChunk>& chunks, const std::vector<QueuedChunk>& queued,
    const std::vector<discovery::NodeInfo>& nodes, const std::vector<discovery::TopicInfo>& topics);

}  // namespace ferry::cli
