// The registry against a client that asks too much: refused requests leave
// nothing behind, the topic and per-node port limits, and topic lists that
// stay inside one datagram however many ports a topic has; and the pool's
// overflow holder nodes, sized for the topics' fan-out.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <unordered_set>

#include "domain_pool.hpp"
#include "ferry/config/load.hpp"
#include "ferry/discovery/protocol.hpp"
#include "registry.hpp"

using namespace ferry::discovery;

namespace {

struct NullShm final : ShmFactory {
  std::set<std::string> objects;
  std::expected<void, std::string> create_ring(const std::string& name, std::uint32_t,
                                               std::uint32_t, Policy) override {
    objects.insert(name);
    return {};
  }
  std::expected<void, std::string> create_doorbell(const std::string& name) override {
    objects.insert(name);
    return {};
  }
  std::expected<void, std::string> adopt_doorbell(const std::string&) override { return {}; }
  void remove(const std::string& name) override { objects.erase(name); }
};

TopicConfig defaults() {
  TopicConfig config;
  config.capacity = 8;
  config.limits.max_publishers = 64;
  config.limits.max_subscribers = 64;
  return config;
}

// A declared topic that only uid 4242 may publish on.
ServedTopic guarded() {
  ServedTopic t;
  t.name = "guarded";
  t.type_name = "T";
  t.type_size = 8;
  t.type_align = 8;
  t.config = defaults();
  t.allow_publish = std::unordered_set<std::string>{"4242"};
  return t;
}

struct Fixture {
  NullShm shm;
  Registry registry{"lim", {guarded()}, defaults(), false, shm};
  Outbox out;
  std::uint64_t node = registry.add_node("n", 1000, 1);

  std::expected<PortCreated, Error> port(const std::string& topic, const std::string& type,
                                         bool publisher = true, uid_t uid = 0) {
    PortRequest request{topic, type, 8, 8, 0, {}};
    return registry.create_port(Peer{node, uid, 0}, publisher, request, out);
  }
};

}  // namespace

TEST_CASE("refused port requests on undeclared topics leave no topic and fix no type") {
  Fixture f;
  // A generic port (no type) cannot choose an undeclared topic's type.
  for (int i = 0; i < 200; ++i) {
    auto refused = f.port("ghost/" + std::to_string(i), "");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == RefusalCode::InvalidArgument);
  }
  CHECK(f.registry.list_topics(0, "").total == 1);  // only the declared one
  // A refused request on the declared topic changes nothing either.
  auto denied = f.port("guarded", "T", true, 7);
  REQUIRE_FALSE(denied.has_value());
  CHECK(denied.error().code == RefusalCode::PermissionDenied);
  CHECK(f.registry.port_count() == 0);
  // The topic a refused request named is still free to take any type.
  REQUIRE_FALSE(f.port("ghost/1", "").has_value());
  auto made = f.port("ghost/1", "Real");
  REQUIRE(made.has_value());
  CHECK(f.registry.list_topics(0, "ghost/1").topics.at(0).type_name == "Real");
}

TEST_CASE("max_topics bounds the topics a domain serves, with a sentence naming the limit") {
  Fixture f;
  f.registry.set_limits({.max_topics = 4, .max_ports_per_node = 256});
  for (int i = 0; i < 3; ++i) REQUIRE(f.port("t/" + std::to_string(i), "T").has_value());
  auto refused = f.port("t/over", "T");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == RefusalCode::LimitExceeded);
  CHECK(refused.error().message.find("max_topics") != std::string::npos);
  CHECK(refused.error().message.find("t/over") != std::string::npos);
  CHECK(f.registry.list_topics(0, "").total == 4);
  // Existing topics still take ports.
  CHECK(f.port("t/0", "T", false).has_value());
}

TEST_CASE("max_ports_per_node bounds one node's ports, with a sentence naming the limit") {
  Fixture f;
  f.registry.set_limits({.max_topics = 1024, .max_ports_per_node = 5});
  for (int i = 0; i < 5; ++i) REQUIRE(f.port("p", "T", false).has_value());
  auto refused = f.port("p", "T", false);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == RefusalCode::LimitExceeded);
  CHECK(refused.error().message.find("max_ports_per_node") != std::string::npos);
  CHECK(f.shm.objects.size() == 5);  // no doorbell made for the refused one
  // Another node is not limited by this one's ports.
  const auto other = f.registry.add_node("other", 1001, 2);
  PortRequest request{"p", "T", 8, 8, 0, {}};
  CHECK(f.registry.create_port(Peer{other, 0, 0}, false, request, f.out).has_value());
}

TEST_CASE("a topic with 40 publishers and 40 subscribers is listed in datagram-sized parts") {
  NullShm shm;
  TopicConfig config = defaults();
  Registry registry{"lim", {}, config, false, shm};
  Outbox out;
  std::size_t ports = 0;
  for (int i = 0; i < 40; ++i) {
    for (bool publisher : {true, false}) {
      const auto node =
          registry.add_node(std::string(60, publisher ? 'p' : 's') + std::to_string(i), 1000 + i,
                            static_cast<std::uint16_t>(ports + 1));
      PortRequest request{"big/topic", "T", 8, 8, 0, {}};
      REQUIRE(registry.create_port(Peer{node, 0, 0}, publisher, request, out).has_value());
      ++ports;
    }
  }
  registry.add_node("small", 1, 100);
  PortRequest small{"z/small", "T", 8, 8, 0, {}};
  REQUIRE(registry.create_port(Peer{registry.node_count(), 0, 0}, true, small, out).has_value());

  std::size_t publishers = 0, subscribers = 0, queues = 0, pages = 0;
  std::set<std::string> names;
  std::uint32_t start = 0, part = 0;
  while (pages < 100) {
    const TopicList page = registry.list_topics(start, "", part);
    ++pages;
    auto bytes = encode(page, 1);
    REQUIRE(bytes.has_value());  // every page fits one datagram
    CHECK(bytes->size() <= kMaxMessageSize);
    for (const auto& t : page.topics) {
      names.insert(t.name);
      publishers += t.publishers.size();
      subscribers += t.subscribers.size();
      queues += t.queues.size();
    }
    if (page.next_part != 0) {
      start += static_cast<std::uint32_t>(page.topics.size() - 1);
      part = page.next_part;
      continue;
    }
    start += static_cast<std::uint32_t>(page.topics.size());
    part = 0;
    if (page.topics.empty() || start >= page.total) break;
  }
  CHECK(pages > 1);
  CHECK(names == std::set<std::string>{"big/topic", "z/small"});
  CHECK(publishers == 41);
  CHECK(subscribers == 40);
  CHECK(queues == 1600);
}

TEST_CASE("a departed node's owner id awaits every survivor's QueueReleased before reuse") {
  NullShm shm;
  Registry registry{"lim", {}, defaults(), false, shm};
  Outbox out;
  const auto gone = registry.add_node("gone", 1000, 5);
  const auto pub_a = registry.add_node("a", 1001, 6);
  const auto pub_b = registry.add_node("b", 1002, 7);
  PortRequest request{"t", "T", 8, 8, 0, {}};
  const auto a = registry.create_port(Peer{pub_a, 0, 0}, true, request, out);
  const auto b = registry.create_port(Peer{pub_b, 0, 0}, true, request, out);
  const auto sub = registry.create_port(Peer{gone, 0, 0}, false, request, out);
  REQUIRE((a && b && sub));
  CHECK_FALSE(registry.awaits_release(5));
  registry.remove_node(gone, UnmatchReason::PeerClosed, out);
  CHECK(registry.awaits_release(5));
  registry.queue_released(pub_a, a->port_id, sub->port_id);
  CHECK(registry.awaits_release(5));
  // A survivor that goes without releasing settles its share too.
  registry.remove_node(pub_b, UnmatchReason::PeerClosed, out);
  CHECK_FALSE(registry.awaits_release(5));
}

TEST_CASE(
    "ferryd sizes the pool's overflow holder nodes for the largest fan-out, or for every "
    "reference the topics can hold, whichever is smaller") {
  using ferry::config::load_string;
  // 13 holders fit a chunk's own metadata; each overflow node holds 13 more.
  // Few subscribers: one node per chunk (the floor), at least 64.
  CHECK(holder_nodes_for(load_string("topics:\n  - { name: a, type: bytes, max_size: 64 }\n"),
                         10) == 64);
  CHECK(holder_nodes_for(load_string("topics:\n  - { name: a, type: bytes, max_size: 64 }\n"),
                         1000) == 1000);
  // 64 subscribers: 64 + 4 observers + the publisher = 69 holders, 5 nodes
  // a chunk; few chunks, so the fan-out bound is the smaller one.
  const auto wide = load_string(
      "topics:\n  - { name: a, type: bytes, max_size: 64, max_subscribers: 64, capacity: 64 }\n");
  CHECK(holder_nodes_for(wide, 100) == 500);
  // Many chunks: bounded by the references the topic can hold at once
  // (8 x (4 + 0 + 64 x 64) + 64 x 4 = 33056: 33056 / 13 + 33056 / 14 + 1),
  // and by every chunk at the default fan-out of undeclared topics (one node).
  constexpr std::uint32_t kByRefs = 33056 / 13 + 33056 / 14 + 1;
  CHECK(holder_nodes_for(wide, 2000) == kByRefs);
  CHECK(holder_nodes_for(wide, 100'000) == 100'000);
  const auto strict = load_string(
      "strict: true\n"
      "topics:\n  - { name: a, type: bytes, max_size: 64, max_subscribers: 64, capacity: 64 }\n");
  CHECK(holder_nodes_for(strict, 100'000) == kByRefs);
  // The fan-out of undeclared topics counts: 200 + 5 holders, 15 nodes a chunk.
  CHECK(holder_nodes_for(load_string("defaults: { max_subscribers: 200 }\n"), 100) == 1500);
}
