// A publisher queue's states (publisher_queue_state.hpp) and the set that
// owns them (publisher_queue_set.hpp), on their own: every legal move and
// every illegal one against the table, and the set's hand-over, leavings
// (each Departure), burial and abandoning on real rings in shared memory
// (no ferryd).
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "publisher_queue_set.hpp"
#include "publisher_queue_state.hpp"
#include "state_table.hpp"

using namespace ferry::detail;  // NOLINT(google-build-using-namespace): the types under test
namespace transport = ferry::transport;

// Named, not anonymous: this file shares a unity build with test_queue_state.cpp.
namespace publisher_queue_test {

using S = PublisherQueueState;

constexpr std::array kAll{S::Incoming, S::Replacing, S::Active, S::Retired, S::Buried};

// The table of publisher_queue_state.hpp, written out move by move: applied;
// its leaving applied; the session ended, or a forked child's copy.
const std::vector<std::pair<S, S>> kLegal{{S::Incoming, S::Active},  {S::Replacing, S::Active},
                                          {S::Active, S::Retired},   {S::Incoming, S::Buried},
                                          {S::Replacing, S::Buried}, {S::Active, S::Buried}};

constexpr transport::RingGeometry kGeometry{.capacity = 8, .slot_size = 64};

// A queue in shared memory: the set writes it, the test reads it through a
// mapping of its own (which outlives the queue end the set frees).
struct TestQueue {
  TestQueue(const char* what, std::uint64_t peer, S first, bool observer = false)
      : name("ferry.test_publisher_queue_state." + std::to_string(::getpid()) + "." + what) {
    auto segment = ferry::test::test_ring(name, kGeometry);
    auto producer = transport::RingProducer::attach(segment.payload(), segment.payload_size());
    REQUIRE(producer.has_value());
    auto mapped = transport::Segment::open(name, transport::SegmentKind::Ring,
                                           transport::kRingLayoutVersion, std::chrono::seconds(1));
    REQUIRE(mapped.has_value());
    reader.emplace(std::move(*mapped));
    consumer.emplace(*transport::RingConsumer::attach(reader->payload(), reader->payload_size()));
    // The subscriber's doorbell: not rung here, only held.
    auto bell = transport::Segment::create(name + ".bell", transport::SegmentKind::Test, 1, 64);
    REQUIRE(bell.has_value());
    end.reset(new PublisherQueueEnd{peer, 0, std::move(segment), std::move(*bell),
                                    std::move(*producer), 0, observer});
    end->state = first;
    queue = end.get();
  }
  ~TestQueue() {
    transport::Segment::remove(name);
    transport::Segment::remove(name + ".bell");
  }
  TestQueue(const TestQueue&) = delete;
  TestQueue& operator=(const TestQueue&) = delete;

  void push(std::uint32_t value) const {
    std::array<std::byte, 4> bytes{};
    std::memcpy(bytes.data(), &value, sizeof value);
    REQUIRE(queue->producer.try_push(bytes, 0, transport::SlotMeta{}).has_value());
  }

  std::string name;
  std::optional<transport::Segment> reader;
  std::optional<transport::RingConsumer> consumer;
  std::unique_ptr<PublisherQueueEnd> end;  // handed to the set
  PublisherQueueEnd* queue = nullptr;      // alive while the set has it
};

// The port's side of the set: its mutex, and what apply() called back.
struct Port {
  RankedMutex<LockRank::PortQueues> mutex;
  PublisherQueueSet set;
  std::vector<S> first_states;  // of the queues written first, in order
  std::vector<std::uint64_t> taken_back;
  std::vector<transport::NodeSlot> revoked;

  // The runtime thread hands q over (with the leavings it replaces).
  void hand_over(TestQueue& q, std::span<const QueueLeaving> replaced = {}) {
    const PublisherQueueSet::Lock lock(mutex);
    set.hand_over(lock, std::move(q.end), replaced);
  }
  void announce(const QueueLeaving& leaving) {
    const PublisherQueueSet::Lock lock(mutex);
    set.announce_leaving(lock, leaving);
  }
  // The user's thread applies the changes.
  void apply() {
    first_states.clear();
    taken_back.clear();
    revoked.clear();
    const PublisherQueueSet::Lock lock(mutex);
    set.apply(
        lock, [&](PublisherQueueEnd& q) { first_states.push_back(q.state); },
        [&](PublisherQueueEnd& q) { taken_back.push_back(q.peer); },
        [&](transport::NodeSlot node) { revoked.push_back(node); });
  }
  // Handed over and applied: Active.
  void add(TestQueue& q) {
    hand_over(q);
    apply();
  }
  [[nodiscard]] std::vector<std::uint64_t> active_peers() {
    std::vector<std::uint64_t> peers;
    for (const auto& q : set.active()) peers.push_back(q->peer);
    return peers;
  }
};

TEST_CASE("the publisher queue state table: each legal move is allowed, every other refused") {
  ferry::test::check_table<S>(kAll, kLegal, publisher_queue_move_legal);
  S state = S::Replacing;
  advance(state, S::Active);
  advance(state, S::Retired);
  CHECK(state == S::Retired);
}

TEST_CASE("each departure does to the ring what the table says") {
  CHECK(takes_back_queued(Departure::PortDestroyed));
  CHECK_FALSE(closes_ring(Departure::PortDestroyed));
  CHECK_FALSE(takes_back_queued(Departure::PeerDied));
  CHECK_FALSE(closes_ring(Departure::PeerDied));
  CHECK_FALSE(takes_back_queued(Departure::Replaced));
  CHECK(closes_ring(Departure::Replaced));
  CHECK_FALSE(takes_back_queued(Departure::OldPeerDied));
  CHECK(closes_ring(Departure::OldPeerDied));
}

#if FERRY_CHECKED
TEST_CASE("an illegal publisher queue move aborts in a checked build") {
  const auto aborts = ferry::test::move_aborts<S>;
  CHECK(aborts(S::Retired, S::Active));
  CHECK(aborts(S::Incoming, S::Retired));  // a leaving is applied to an Active queue
  CHECK(aborts(S::Buried, S::Retired));
  CHECK(aborts(S::Active, S::Incoming));
  CHECK_FALSE(aborts(S::Active, S::Retired));
}
#endif

TEST_CASE("the set applies new queues (subscribers first) and each leaving as its departure says") {
  Port port;
  TestQueue observer("observer", 1, S::Incoming, true);
  TestQueue a("a", 2, S::Incoming);
  TestQueue b("b", 3, S::Incoming);
  TestQueue c("c", 4, S::Incoming);
  for (TestQueue* q : {&observer, &a, &b, &c}) port.hand_over(*q);
  CHECK(port.set.handed(2) == a.queue);
  CHECK(port.set.active().empty());  // nothing reaches the hot path before apply
  port.apply();
  CHECK(port.first_states == std::vector<S>(4, S::Incoming));
  CHECK(port.active_peers() == std::vector<std::uint64_t>{2, 3, 4, 1});  // the observer last
  CHECK(port.set.subscriber_queues() == 3);
  for (const auto& q : port.set.active()) CHECK(q->state == S::Active);

  // a's port was destroyed (what it holds is taken back), b's node died
  // (revoked once dropped), c was replaced (closed: its reader moves on).
  a.push(1);
  c.push(2);
  CHECK(port.set.release(2) == a.queue);
  CHECK(port.set.release(2) == nullptr);  // released once
  CHECK(port.set.abandon(3) == b.queue);
  CHECK(b.queue->abandoned.load());
  (void)port.set.release(4);
  CHECK_FALSE(c.queue->abandoned.load());  // a replaced queue's reader drains it
  port.announce(QueueLeaving{2, Departure::PortDestroyed, 0});
  port.announce(QueueLeaving{3, Departure::PeerDied, 77});
  port.announce(QueueLeaving{4, Departure::Replaced, 0});
  CHECK_FALSE(c.consumer->finished());
  port.apply();
  CHECK(port.first_states.empty());
  CHECK(port.taken_back == std::vector<std::uint64_t>{2});
  CHECK(port.revoked == std::vector<transport::NodeSlot>{77});
  CHECK(port.active_peers() == std::vector<std::uint64_t>{1});
  CHECK(port.set.subscriber_queues() == 0);
  // The replaced queue was closed after its last sample: its reader takes
  // that, then sees it finished.
  std::array<std::byte, 64> buffer{};
  std::uint32_t flags = 0;
  CHECK(c.consumer->try_pop(buffer, &flags).has_value());
  CHECK(c.consumer->finished());
}

TEST_CASE("a replacing queue and its old queue's leaving are applied in one step") {
  Port port;
  TestQueue old_queue("old", 1, S::Incoming);
  TestQueue next("next", 2, S::Replacing);
  port.add(old_queue);
  (void)port.set.abandon(1);  // its node is found dead
  const std::array replaced{QueueLeaving{1, Departure::OldPeerDied, 9}};
  port.hand_over(next, replaced);
  CHECK(port.active_peers() == std::vector<std::uint64_t>{1});  // not applied yet
  port.apply();
  CHECK(port.first_states == std::vector<S>{S::Replacing});  // it gets no history
  CHECK(port.active_peers() == std::vector<std::uint64_t>{2});
  CHECK(port.revoked == std::vector<transport::NodeSlot>{9});
  CHECK(port.taken_back.empty());
  CHECK(old_queue.consumer->finished());  // closed
}

TEST_CASE("a push blocked on an abandoned queue gives up; the session's end buries every queue") {
  Port port;
  TestQueue a("bury.a", 1, S::Incoming);
  TestQueue b("bury.b", 2, S::Incoming);
  port.add(a);
  for (std::uint32_t i = 0; i < kGeometry.capacity; ++i) a.push(i);  // full
  port.hand_over(b);
  port.announce(QueueLeaving{5, Departure::PeerDied, 55});  // not applied
  port.set.abandon_all();                                   // our node was declared dead
  CHECK(port.set.handed(1) == nullptr);
  const auto room = a.queue->producer.wait_room(std::chrono::seconds(5), &a.queue->abandoned);
  REQUIRE_FALSE(room.has_value());
  CHECK(room.error() == transport::RingError::Abandoned);
  {
    const PublisherQueueSet::Lock lock(port.mutex);
    port.set.bury(lock, [&](transport::NodeSlot node) { port.revoked.push_back(node); });
  }
  CHECK(port.set.active().empty());
  CHECK(port.set.subscriber_queues() == 0);
  CHECK(port.revoked == std::vector<transport::NodeSlot>{55});
  CHECK(a.queue->state == S::Buried);  // kept (not freed) until the set goes
  CHECK(b.queue->state == S::Buried);
  CHECK_FALSE(a.consumer->finished());  // a buried queue is not written, not even closed
}

TEST_CASE("a forked child's copy buries its active queues; a port that goes closes the rest") {
  TestQueue a("end.a", 1, S::Incoming);
  TestQueue b("end.b", 2, S::Incoming);
  TestQueue c("end.c", 3, S::Incoming);
  {
    Port child;
    child.add(a);
    child.set.bury_inherited();
    CHECK(a.queue->state == S::Buried);
    CHECK(child.set.active().empty());
  }
  Port port;
  port.add(b);
  port.hand_over(c);  // still Incoming when the port goes
  port.announce(QueueLeaving{9, Departure::PeerDied, 99});
  {
    const PublisherQueueSet::Lock lock(port.mutex);
    port.set.close_all(lock, [&](transport::NodeSlot node) { port.revoked.push_back(node); });
  }
  CHECK(port.revoked == std::vector<transport::NodeSlot>{99});
  CHECK(b.consumer->finished());
  CHECK(c.consumer->finished());
}

}  // namespace publisher_queue_test
