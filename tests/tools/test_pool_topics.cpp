// How `ferry pool` attributes chunks to topics (pool_topics.hpp), on
// made-up scans: no daemon, no shared memory.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "pool_topics.hpp"

using namespace ferry;
using namespace ferry::cli;

namespace {

discovery::NodeInfo node(const std::string& name, std::uint32_t owner,
                         std::vector<std::string> publishes,
                         std::vector<std::string> subscribes = {}) {
  discovery::NodeInfo n;
  n.name = name;
  n.slot = owner;
  for (auto& t : publishes) n.publishers.push_back({0, std::move(t)});
  for (auto& t : subscribes) n.subscribers.push_back({0, std::move(t)});
  return n;
}

discovery::TopicInfo topic(const std::string& name, std::uint64_t sample_size,
                           const std::string& type = "T") {
  discovery::TopicInfo t;
  t.name = name;
  t.type_name = type;
  t.sample_size = sample_size;
  return t;
}

// A chunk allocated by `origin`, then with these holders (owner, giver, held, pending).
transport::LiveChunk chunk(std::uint32_t index, transport::NodeSlot origin,
                           std::vector<transport::ChunkHolder> holders, std::uint64_t size = 1024) {
  transport::LiveChunk c;
  c.ref = transport::ChunkRef::of(0, index, 1);
  c.chunk_size = size;
  c.origin = origin;
  c.holder_count = static_cast<std::uint32_t>(holders.size());
  c.holders = std::move(holders);
  return c;
}

}  // namespace

TEST_CASE("a queued chunk is its queue's topic; a held one follows its publisher and subscriber") {
  const std::vector nodes{node("cam", 1, {"frames", "depth"}), node("view", 2, {}, {"frames"})};
  const std::vector topics{topic("frames", 1 << 20), topic("depth", 1 << 20)};
  const std::vector chunks{
      chunk(0, 1, {{2, 1, 0, 1}}),  // queued to view (the ring says frames)
      chunk(1, 1,
            {{2, 1, 1, 0}}),  // taken by view: cam publishes frames and depth, view takes frames
      chunk(2, 1, {{1, 0, 1, 0}}),  // cam's loan: frames or depth, it cannot tell
  };
  const std::vector<QueuedChunk> queued{{"frames", chunks[0].ref}};
  const auto out = chunks_by_topic(chunks, queued, nodes, topics);
  REQUIRE(out.size() == 2);
  CHECK(out[0].topic == "frames");
  CHECK(out[0].chunks == 2);
  CHECK(out[0].queued == 1);
  CHECK(out[0].held == 1);
  CHECK(out[0].bytes == 2048);
  CHECK(out[0].nodes == std::vector<std::string>{"view"});
  CHECK(out[1].topic.empty());
  CHECK(out[1].candidates == std::vector<std::string>{"depth", "frames"});
  CHECK(out[1].label() == "(node cam, topics depth, frames)");
}

TEST_CASE("a loan goes to the node's one topic that travels through the pool") {
  const std::vector nodes{node("cam", 1, {"frames", "status"}), node("logger", 2, {"log", "tick"})};
  const std::vector topics{topic("frames", 1 << 20), topic("status", 64), topic("log", 0, "bytes"),
                           topic("tick", 16)};
  const std::vector chunks{chunk(0, 1, {{1, 0, 1, 0}}), chunk(1, 2, {{2, 0, 1, 0}}),
                           chunk(2, 2, {{2, 0, 1, 0}})};
  const auto out = chunks_by_topic(chunks, {}, nodes, topics);
  REQUIRE(out.size() == 2);
  CHECK(out[0].topic == "log");  // bytes: always pooled
  CHECK(out[0].chunks == 2);
  CHECK(out[1].topic == "frames");  // above the inline limit
  CHECK(out[1].held == 1);
}

TEST_CASE(
    "small topics count when the node has nothing else, and pooled slots seen queued make a topic "
    "pooled") {
  const std::vector nodes{node("a", 1, {"x", "y"}), node("b", 2, {"p", "q"}, {}),
                          node("c", 3, {}, {"p"})};
  const std::vector topics{topic("x", 64), topic("y", 64), topic("p", 64), topic("q", 64)};
  const std::vector chunks{chunk(0, 1, {{1, 0, 1, 0}}), chunk(1, 2, {{3, 2, 0, 1}}),
                           chunk(2, 2, {{2, 0, 1, 0}})};
  // b's loans on p are visible in p's queue: its held loan is p's too.
  const std::vector<QueuedChunk> queued{{"p", chunks[1].ref}};
  const auto out = chunks_by_topic(chunks, queued, nodes, topics);
  REQUIRE(out.size() == 2);
  CHECK(out[0].topic == "p");
  CHECK(out[0].chunks == 2);
  CHECK(out[0].queued == 1);
  CHECK(out[0].held == 1);
  CHECK(out[0].nodes == std::vector<std::string>{"b", "c"});
  CHECK(out[1].label() == "(node a, topics x, y)");
}

TEST_CASE("chunks of owners ferryd no longer lists are a group without a topic") {
  const std::vector chunks{chunk(0, 9, {{9, 0, 1, 0}}), chunk(1, 9, {{9, 0, 1, 0}})};
  const auto out = chunks_by_topic(chunks, {}, {}, {});
  REQUIRE(out.size() == 1);
  CHECK(out[0].chunks == 2);
  CHECK(out[0].candidates.empty());
  CHECK(out[0].label() == "(node owner 9, no known topic)");
}
