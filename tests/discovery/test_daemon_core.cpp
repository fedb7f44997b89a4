// ferryd's core (daemon_core.hpp) driven as Aeron's conductor is: events
// and `now` in, effects out. No socket, no sleep, no shared memory: rings go
// to a fake factory, reclaims to fake liveness actions, heartbeats to a
// table on the heap, and time moves only when a test moves `now`.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon_core.hpp"
#include "daemon_fakes.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/service.hpp"
#include "ferry/discovery/protocol.hpp"

using namespace ferry::discovery;
using ferry::discovery::test::FakeActions;
using ferry::discovery::test::FakeShm;
using ferry::discovery::test::Table;

namespace {

constexpr std::uint32_t kTimeoutMs = 1000;

DaemonCoreSettings settings() {
  DaemonCoreSettings s;
  s.access = {"core_test", ::geteuid(), std::nullopt};
  s.config_source = "core_test.yaml";
  s.config_text = "domain: core_test\n";
  return s;
}

// A core on a fresh heap table; `now` is the only clock.
struct Core {
  FakeShm shm;
  FakeActions actions;
  Table table;
  ferry::config::Config config;
  DaemonCore core;
  std::uint64_t now = 100'000;

  explicit Core(const std::string& yaml = "")
      : config(ferry::config::load_string("liveness: { heartbeat_ms: 100, timeout_ms: " +
                                          std::to_string(kTimeoutMs) + " }\n" + yaml)),
        core(settings(), config, shm, actions, [](uid_t, gid_t) { return false; }) {
    core.start_fresh(table.beats, PoolFacts{4096, 64, 64}, now);
  }

  Effects connect(ConnectionId id, pid_t pid, uid_t uid = ::geteuid()) {
    return core.connected(now, id, Credentials{pid, uid, ::getegid()});
  }
  Effects send(ConnectionId id, const Message& message, std::uint32_t request_id = 1) {
    return core.received(now, id, request_id, message);
  }
  // Connects and says Hello; the Welcome's slot (its process counts as running).
  std::uint16_t join(ConnectionId id, const std::string& name, pid_t pid) {
    REQUIRE(connect(id, pid).empty());
    const Effects out = send(id, Hello{kProtocolVersion, name, pid, 0});
    REQUIRE(out.size() == 1);
    const auto& welcome = std::get<Welcome>(std::get<SendMessage>(out[0]).message);
    const auto slot = static_cast<std::uint16_t>(welcome.node_slot);
    actions.running.insert(slot);
    return slot;
  }
};

// A port of an undeclared topic's first type: one opaque byte.
CreatePublisher publisher_on(const std::string& topic, const std::string& type = "bytes",
                             std::uint64_t size = 1) {
  CreatePublisher p;
  p.topic = topic;
  p.type_name = type;
  p.type_size = size;
  p.type_align = 1;
  return p;
}

CreateSubscriber subscriber_on(const std::string& topic) {
  CreateSubscriber s;
  s.topic = topic;
  s.type_name = "bytes";
  s.type_size = 1;
  s.type_align = 1;
  return s;
}

// The messages the effects send to `to`, in order.
std::vector<Message> sent_to(const Effects& out, ConnectionId to) {
  std::vector<Message> messages;
  for (const Effect& e : out) {
    if (const auto* s = std::get_if<SendMessage>(&e); s != nullptr && s->to == to) {
      messages.push_back(s->message);
    }
  }
  return messages;
}

// Where in `out` the connection is closed; nullopt: it is not.
std::optional<std::size_t> closed_at(const Effects& out, ConnectionId id) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (const auto* c = std::get_if<CloseConnection>(&out[i]); c && c->connection == id) return i;
  }
  return std::nullopt;
}

RefusalCode error_of(const Message& message) { return std::get<Error>(message).code; }

}  // namespace

TEST_CASE("a Hello gets a Welcome with the new node's lock; ListNodes ages it by `now`") {
  Core c;
  CHECK(c.connect(3, 4242).empty());
  const Effects out = c.send(3, Hello{kProtocolVersion, "planner", 4242, 0}, 7);
  REQUIRE(out.size() == 1);
  const auto& reply = std::get<SendMessage>(out[0]);
  CHECK(reply.to == 3);
  CHECK(reply.request_id == 7);
  const auto& welcome = std::get<Welcome>(reply.message);
  CHECK(welcome.domain == "core_test");
  CHECK(welcome.timeout_ms == kTimeoutMs);
  REQUIRE(reply.node_lock.has_value());
  CHECK(*reply.node_lock == welcome.node_slot);
  const auto slot = static_cast<std::uint16_t>(welcome.node_slot);
  CHECK(c.core.liveness().state(slot) == NodeState::Alive);

  c.now += 250;
  const auto list = std::get<NodeList>(sent_to(c.send(3, ListNodes{}), 3).at(0));
  REQUIRE(list.nodes.size() == 1);
  CHECK(list.nodes[0].name == "planner");
  CHECK(list.nodes[0].connected_ms == 250);
  CHECK(list.nodes[0].heartbeat_age_ms == 250);

  // A second Hello on the same connection is refused, and the client dropped.
  const Effects twice = c.send(3, Hello{kProtocolVersion, "planner", 4242, 0});
  CHECK(error_of(sent_to(twice, 3).at(0)) == RefusalCode::AlreadyRegistered);
  CHECK(closed_at(twice, 3).has_value());
  CHECK(c.core.connection_count() == 0);
}

TEST_CASE("a publisher and a subscriber are matched: each reply first, then Matched to both") {
  Core c;
  c.join(3, "pub", 100);
  c.join(4, "sub", 200);
  const Effects made_pub = c.send(3, publisher_on("robot/pose"));
  REQUIRE(made_pub.size() == 1);
  CHECK(std::holds_alternative<PortCreated>(std::get<SendMessage>(made_pub[0]).message));

  const Effects made_sub = c.send(4, subscriber_on("robot/pose"), 9);
  REQUIRE(made_sub.size() == 3);
  const auto& reply = std::get<SendMessage>(made_sub[0]);
  CHECK(reply.to == 4);
  CHECK(reply.request_id == 9);
  CHECK(std::holds_alternative<PortCreated>(reply.message));
  CHECK(std::holds_alternative<Matched>(sent_to(made_sub, 3).at(0)));
  CHECK(std::holds_alternative<Matched>(sent_to(made_sub, 4).at(1)));
  CHECK(c.shm.rings() == 1);
  CHECK(c.core.registry().queue_count() == 1);
}

TEST_CASE("a node silent past timeout_ms is declared dead on that tick, reclaimed, peers told") {
  Core c;
  const auto pub = c.join(3, "frozen", 100);
  const auto sub = c.join(4, "reader", 200);
  (void)c.send(3, publisher_on("robot/pose"));
  (void)c.send(4, subscriber_on("robot/pose"));

  // The subscriber beats, the publisher does not: its beat is its Hello's `now`.
  c.now += kTimeoutMs;
  c.table.beat(sub, c.now);
  CHECK(c.core.tick(c.now).empty());
  CHECK(c.core.liveness().state(pub) == NodeState::Alive);

  c.now += 1;
  c.table.beat(sub, c.now);
  const Effects out = c.core.tick(c.now);
  const auto told = sent_to(out, 3);
  REQUIRE(told.size() == 1);
  CHECK(error_of(told[0]) == RefusalCode::NodeExpired);
  CHECK(std::get<Error>(told[0]).message.find("1001 ms without a heartbeat") != std::string::npos);
  // Told, closed, reclaimed, and only then its peer's Unmatched.
  const auto close = closed_at(out, 3);
  REQUIRE(close.has_value());
  const auto to_peer = sent_to(out, 4);
  REQUIRE(to_peer.size() == 1);
  CHECK(std::get<Unmatched>(to_peer[0]).reason == UnmatchReason::PeerTimedOut);
  CHECK(std::get<SendMessage>(out.back()).to == 4);
  REQUIRE(c.actions.reclaims.size() == 1);
  CHECK(c.actions.reclaims[0] == std::pair<std::uint16_t, bool>{pub, false});
  CHECK(c.table.word(pub) == SlotState::DeclaredDead);
  CHECK(c.core.liveness().state(pub) == NodeState::Reclaiming);  // its process lives

  // Its process goes: the next probe frees the slot.
  c.actions.running.erase(pub);
  c.now += NodeLiveness::kProbePeriodMs;
  c.table.beat(sub, c.now);
  CHECK(c.core.tick(c.now).empty());
  CHECK(c.core.liveness().state(pub) == NodeState::Free);
  CHECK(c.core.liveness().state(sub) == NodeState::Alive);
}

TEST_CASE("limits: connections past max_connections and Hellos past max_nodes are refused") {
  Core c("limits: { max_nodes: 1 }\n");
  c.core.set_max_connections(2);
  CHECK(c.connect(3, 100).empty());
  CHECK(c.connect(4, 200).empty());
  const Effects third = c.connect(5, 300);
  CHECK(error_of(sent_to(third, 5).at(0)) == RefusalCode::ResourceExhausted);
  CHECK(std::get<Error>(sent_to(third, 5).at(0)).message.find("max_connections") !=
        std::string::npos);
  CHECK(closed_at(third, 5) == 1u);

  const Effects first = c.send(3, Hello{kProtocolVersion, "one", 100, 0});
  const auto slot =
      static_cast<std::uint16_t>(std::get<Welcome>(sent_to(first, 3).at(0)).node_slot);
  const Effects second = c.send(4, Hello{kProtocolVersion, "two", 200, 0});
  const Error refused = std::get<Error>(sent_to(second, 4).at(0));
  CHECK(refused.code == RefusalCode::ResourceExhausted);
  CHECK(refused.message.find("all 1 node slots") != std::string::npos);
  CHECK(closed_at(second, 4).has_value());

  // The node leaves and its process is gone: its slot is reclaimed once more,
  // before the Welcome that gives it again.
  CHECK(c.core.hung_up(3).size() == 1);
  CHECK(c.core.liveness().state(slot) == NodeState::Free);
  // Recycling is asked at most every 100 ms (the refused Hello asked it).
  c.now += 100;
  CHECK(c.connect(6, 600).empty());
  const Effects again = c.send(6, Hello{kProtocolVersion, "three", 600, 0});
  REQUIRE(again.size() == 2);
  CHECK(std::get<ReclaimSlot>(again[0]).owner == slot);
  CHECK(std::get<Welcome>(std::get<SendMessage>(again[1]).message).node_slot == slot);
}

TEST_CASE("a connection that says no Hello within hello_timeout_ms is told and closed") {
  Core c("limits: { hello_timeout_ms: 300 }\n");
  CHECK(c.connect(3, 100).empty());
  c.now += 300;
  CHECK(c.core.tick(c.now).empty());
  c.now += 1;
  const Effects out = c.core.tick(c.now);
  CHECK(error_of(sent_to(out, 3).at(0)) == RefusalCode::NotRegistered);
  CHECK(closed_at(out, 3) == 1u);
  CHECK(c.core.connection_count() == 0);
}

TEST_CASE("a service has one server: a second one is refused, naming the node that serves") {
  Core c;
  c.join(3, "server", 100);
  c.join(4, "client", 200);
  c.join(5, "usurper", 300);
  const std::string requests = ferry::config::service_request_topic("adder");
  CHECK(std::holds_alternative<PortCreated>(sent_to(c.send(3, subscriber_on(requests)), 3).at(0)));
  const Effects client = c.send(4, publisher_on(requests));
  CHECK(std::holds_alternative<PortCreated>(sent_to(client, 4).at(0)));
  CHECK(std::holds_alternative<Matched>(sent_to(client, 3).at(0)));

  const Effects second = c.send(5, subscriber_on(requests));
  const Error refused = std::get<Error>(sent_to(second, 5).at(0));
  CHECK(refused.code == RefusalCode::LimitExceeded);
  CHECK(refused.message.find("node 'server' (pid 100) serves it") != std::string::npos);
  CHECK_FALSE(closed_at(second, 5).has_value());  // a refused port keeps the node
}

TEST_CASE("out of place: a port before Hello, a daemon's message, garbage, a stranger") {
  Core c;
  CHECK(c.connect(3, 100).empty());
  const Effects early = c.send(3, publisher_on("robot/pose"));
  CHECK(error_of(sent_to(early, 3).at(0)) == RefusalCode::NotRegistered);
  CHECK(closed_at(early, 3).has_value());

  c.join(4, "confused", 200);
  const Effects wrong = c.send(4, Welcome{});
  CHECK(std::get<Error>(sent_to(wrong, 4).at(0)).message == "a client may not send Welcome");
  CHECK(closed_at(wrong, 4).has_value());

  CHECK(c.connect(5, 300).empty());
  const Effects garbage = c.core.malformed(c.now, 5, "truncated header");
  CHECK(error_of(sent_to(garbage, 5).at(0)) == RefusalCode::MalformedMessage);
  CHECK(closed_at(garbage, 5).has_value());

  const Effects stranger = c.connect(6, 400, ::geteuid() + 1);
  CHECK(error_of(sent_to(stranger, 6).at(0)) == RefusalCode::PermissionDenied);
  CHECK(closed_at(stranger, 6).has_value());
  CHECK(c.core.connection_count() == 0);
}

TEST_CASE("a reload that conflicts with a live port is refused whole; one that fits applies") {
  Core c("topics:\n  - { name: robot/pose, type: bytes, max_size: 64, capacity: 8 }\n");
  c.join(3, "pub", 100);
  const Effects made = c.send(3, publisher_on("robot/pose", "ferry::Bytes", 0));
  REQUIRE(std::holds_alternative<PortCreated>(sent_to(made, 3).at(0)));
  LoadedConfig changed{
      ferry::config::load_string("topics:\n  - { name: robot/pose, type: bytes, max_size: 64, "
                                 "capacity: 16 }\n"),
      "changed"};
  c.core.reload(std::move(changed));
  const auto page = [&] {
    return std::get<ConfigText>(sent_to(c.send(3, GetConfig{}), 3).at(0)).text;
  };
  CHECK(page() == "domain: core_test\n");
  LoadedConfig added{ferry::config::load_string(
                         "topics:\n  - { name: robot/pose, type: bytes, max_size: 64, "
                         "capacity: 8 }\n  - { name: robot/cmd, type: bytes, max_size: 64 }\n"),
                     "added"};
  c.core.reload(std::move(added));
  CHECK(page() == "added");
}

TEST_CASE("adopting a previous ferryd's table: its live node resumes its slot, dead ones go") {
  FakeShm shm;
  FakeActions actions;
  Table table;
  table.set(2, SlotState::Alive, 4242);       // its process runs: an orphan, may come back
  table.set(5, SlotState::Reclaiming, 5555);  // left mid-reclaim: finished by the adoption
  actions.running.insert(2);
  table.beats.header().next_owner.store(6, std::memory_order_relaxed);
  table.beats.header().next_id.store(50, std::memory_order_relaxed);
  const auto config = ferry::config::load_string("liveness: { heartbeat_ms: 100 }\n");
  DaemonCore core(settings(), config, shm, actions, [](uid_t, gid_t) { return false; });
  std::uint64_t now = 100'000;

  const auto live = core.adopt_slots(table.beats);
  REQUIRE(live.size() == 1);
  CHECK(live[0].owner == 2);
  CHECK(core.finish_adoption(table.beats, PoolFacts{4096, 64, 64}, 0, now) == 1);
  CHECK(core.liveness().state(2) == NodeState::Orphan);
  CHECK(core.liveness().state(5) == NodeState::Free);
  CHECK(core.registry().next_id() == 50);

  // The orphan's process says Hello with its slot: the same slot, no new lock.
  CHECK(core.connected(now, 3, Credentials{4242, ::geteuid(), ::getegid()}).empty());
  const Effects back = core.received(now, 3, 1, Hello{kProtocolVersion, "survivor", 4242, 2});
  const auto& resumed = std::get<SendMessage>(back.at(0));
  CHECK(std::get<Welcome>(resumed.message).node_slot == 2);
  CHECK_FALSE(resumed.node_lock.has_value());
  CHECK(core.liveness().state(2) == NodeState::Alive);

  // A new node gets a slot the previous ferryd never gave.
  CHECK(core.connected(now, 4, Credentials{7777, ::geteuid(), ::getegid()}).empty());
  const Effects fresh = core.received(now, 4, 1, Hello{kProtocolVersion, "newcomer", 7777, 0});
  CHECK(std::get<Welcome>(std::get<SendMessage>(fresh.at(0)).message).node_slot == 6);
}
