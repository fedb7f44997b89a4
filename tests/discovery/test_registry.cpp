// The registry's bookkeeping, driven without a process: matching creates a
// ring per pair, and a ring's name lives until both ends have let go of it.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "daemon_fakes.hpp"
#include "registry.hpp"

using namespace ferry::discovery;
using ferry::discovery::test::FakeShm;

namespace {

TopicConfig defaults() {
  TopicConfig config;
  config.policy = Policy::Block;
  config.capacity = 8;
  config.limits.max_publishers = 8;
  config.limits.max_subscribers = 8;
  return config;
}

struct Fixture {
  FakeShm shm;
  Registry registry{"reg", {}, defaults(), false, shm};
  Outbox out;

  std::uint64_t node(const std::string& name) {
    return registry.add_node(name, 1000, static_cast<std::uint16_t>(registry.node_count() + 1));
  }
  std::uint64_t port(std::uint64_t node_id, bool publisher) {
    PortRequest request{"t", "T", 8, 8, 0, {}};
    auto made = registry.create_port(Peer{node_id, 0, 0}, publisher, request, out);
    REQUIRE(made.has_value());
    return made->port_id;
  }
  [[nodiscard]] bool told_unmatched(std::uint64_t node_id, std::uint64_t port_id,
                                    std::uint64_t peer) const {
    return std::any_of(out.begin(), out.end(), [&](const auto& item) {
      const auto* u = std::get_if<Unmatched>(&item.second);
      return item.first == node_id && u != nullptr && u->port_id == port_id &&
             u->peer_port_id == peer;
    });
  }
};

}  // namespace

TEST_CASE("a departed publisher's ring keeps its name until the subscriber releases it") {
  Fixture f;
  const auto sub_node = f.node("sub");
  const auto pub_node = f.node("pub");
  const auto sub = f.port(sub_node, false);
  const auto pub = f.port(pub_node, true);
  REQUIRE(f.shm.rings() == 1);

  f.out.clear();
  f.registry.remove_node(pub_node, UnmatchReason::PeerClosed, f.out);
  CHECK(f.told_unmatched(sub_node, sub, pub));
  // The subscriber may not have mapped the ring yet: it must still open.
  CHECK(f.shm.rings() == 1);
  CHECK(f.registry.lingering_count() == 1);

  // Another node cannot release it for the subscriber.
  f.registry.queue_released(pub_node, sub, pub);
  f.registry.queue_released(f.node("other"), sub, pub);
  CHECK(f.shm.rings() == 1);

  f.registry.queue_released(sub_node, sub, pub);
  CHECK(f.shm.rings() == 0);
  CHECK(f.registry.lingering_count() == 0);
  f.registry.queue_released(sub_node, sub, pub);  // a repeat is harmless
}

TEST_CASE("a departed subscriber's ring lingers for the publisher the same way") {
  Fixture f;
  const auto pub_node = f.node("pub");
  const auto sub_node = f.node("sub");
  const auto pub = f.port(pub_node, true);
  const auto sub = f.port(sub_node, false);
  f.out.clear();
  REQUIRE(f.registry.destroy_port(sub_node, sub, f.out).has_value());
  CHECK(f.told_unmatched(pub_node, pub, sub));
  CHECK(f.shm.rings() == 1);
  f.registry.queue_released(pub_node, pub, sub);
  CHECK(f.shm.rings() == 0);
}

TEST_CASE("a survivor that goes without releasing takes the lingering rings with it") {
  Fixture f;
  const auto sub_node = f.node("sub");
  const auto sub = f.port(sub_node, false);
  const auto pub_a = f.node("a");
  const auto pub_b = f.node("b");
  f.port(pub_a, true);
  f.port(pub_b, true);
  REQUIRE(f.shm.rings() == 2);
  f.registry.remove_node(pub_a, UnmatchReason::PeerClosed, f.out);
  f.registry.remove_node(pub_b, UnmatchReason::PeerClosed, f.out);
  CHECK(f.shm.rings() == 2);
  REQUIRE(f.registry.destroy_port(sub_node, sub, f.out).has_value());
  CHECK(f.shm.rings() == 0);
  CHECK(f.shm.objects.empty());  // the doorbell went with its port
  CHECK(f.registry.lingering_count() == 0);
}

TEST_CASE("when both ends go, the ring goes at once") {
  Fixture f;
  const auto node = f.node("both");
  f.port(node, true);
  f.port(node, false);
  REQUIRE(f.shm.rings() == 1);
  f.registry.remove_node(node, UnmatchReason::PeerClosed, f.out);
  CHECK(f.shm.objects.empty());
  CHECK(f.registry.lingering_count() == 0);
}

TEST_CASE("an undeclared topic keeps its first generated port's layout for the ports after it") {
  Fixture f;
  const auto node = f.node("n");
  const Peer peer{node, 0, 0};
  PortRequest first{"free", "Pair", 8, 4, 0, {}, "left:u32@0 right:u32@4"};
  REQUIRE(f.registry.create_port(peer, true, first, f.out).has_value());
  // A hand-written port (no fingerprint) keeps the name/size/alignment check.
  PortRequest hand{"free", "Pair", 8, 4, 0, {}, ""};
  CHECK(f.registry.create_port(peer, false, hand, f.out).has_value());
  PortRequest swapped{"free", "Pair", 8, 4, 0, {}, "right:u32@0 left:u32@4"};
  const auto refused = f.registry.create_port(peer, false, swapped, f.out);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == RefusalCode::TypeMismatch);
  CHECK(refused.error().message.find("field 'left' is u32 at offset 4 in the port's type but u32 "
                                     "at offset 0 in the topic's") != std::string::npos);
}

TEST_CASE(
    "an observer gets drop_oldest rings, is not counted toward max_subscribers, and is flagged") {
  FakeShm shm;
  TopicConfig config = defaults();  // block
  config.limits.max_subscribers = 1;
  Registry registry{"reg", {}, config, false, shm};
  Outbox out;
  const auto n = registry.add_node("n", 1000, 1);
  auto make = [&](bool publisher, bool observer) {
    PortRequest request{"t", "T", 8, 8, 0, {}, {}, observer};
    return registry.create_port(Peer{n, 0, 0}, publisher, request, out);
  };
  const auto pub = make(true, false);
  REQUIRE(pub);
  REQUIRE(make(false, false));  // the topic's one real subscriber
  const auto refused = make(false, false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == RefusalCode::LimitExceeded);
  CHECK(refused.error().message == "topic 't' already has 1 subscribers, its max_subscribers is 1");

  out.clear();
  const auto watcher = make(false, true);
  REQUIRE(watcher);
  REQUIRE(make(false, true));  // as many observers as tools
  // Ring names end in random bits (object_names.hpp): found by their prefix.
  const std::string prefix = "ferry.reg.ring." + std::to_string(pub->port_id) + "." +
                             std::to_string(watcher->port_id) + ".";
  const auto made = std::find_if(shm.ring_policy.begin(), shm.ring_policy.end(),
                                 [&](const auto& r) { return r.first.starts_with(prefix); });
  REQUIRE(made != shm.ring_policy.end());
  CHECK(made->first.size() == prefix.size() + 16);
  const std::string ring = made->first;
  CHECK(shm.ring_policy[ring] == Policy::DropOldest);
  CHECK(std::count_if(shm.ring_policy.begin(), shm.ring_policy.end(),
                      [](const auto& r) { return r.second == Policy::Block; }) == 1);
  const auto to_pub = std::find_if(out.begin(), out.end(), [&](const auto& item) {
    const auto* m = std::get_if<Matched>(&item.second);
    return m != nullptr && m->port_id == pub->port_id && m->peer_port_id == watcher->port_id;
  });
  REQUIRE(to_pub != out.end());
  CHECK(std::get<Matched>(to_pub->second).peer_observer);

  const TopicList list = registry.list_topics(0, "t");
  REQUIRE(list.topics.size() == 1);
  REQUIRE(list.topics[0].subscribers.size() == 3);
  CHECK_FALSE(list.topics[0].subscribers[0].observer);
  CHECK(list.topics[0].subscribers[1].observer);

  const auto observing_publisher = make(true, true);
  REQUIRE_FALSE(observing_publisher);
  CHECK(observing_publisher.error().code == RefusalCode::InvalidArgument);
  CHECK(observing_publisher.error().message.find("cannot be an observer") != std::string::npos);
}
