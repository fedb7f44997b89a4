// A subscriber queue's states (queue_state.hpp) and the set that reads them
// (queue_set.hpp), on their own: every legal move and every illegal one
// against the table, and QueueSet's take order, waits and retiring on real
// rings in shared memory (no ferryd).
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "queue_set.hpp"
#include "queue_state.hpp"
#include "state_table.hpp"

using namespace ferry::detail;  // NOLINT(google-build-using-namespace): the types under test
namespace transport = ferry::transport;

namespace {

constexpr std::array kAll{
    QueueState::Live,       QueueState::Waiting,          QueueState::Old,
    QueueState::OldWaiting, QueueState::Closed,           QueueState::ClosedWaiting,
    QueueState::OldClosed,  QueueState::OldClosedWaiting, QueueState::Dropped,
};

// The table of queue_state.hpp, written out move by move.
const std::vector<std::pair<QueueState, QueueState>> kLegal{
    // ferryd restarted and adopted the node
    {QueueState::Live, QueueState::Old},
    {QueueState::Waiting, QueueState::OldWaiting},
    // the publisher left or died (an Old one also: finished)
    {QueueState::Live, QueueState::Closed},
    {QueueState::Waiting, QueueState::ClosedWaiting},
    {QueueState::Old, QueueState::OldClosed},
    {QueueState::OldWaiting, QueueState::OldClosedWaiting},
    // no older queue of the publisher is left
    {QueueState::Waiting, QueueState::Live},
    {QueueState::OldWaiting, QueueState::Old},
    {QueueState::ClosedWaiting, QueueState::Closed},
    {QueueState::OldClosedWaiting, QueueState::OldClosed},
    // drained, or the session ended
    {QueueState::Live, QueueState::Dropped},
    {QueueState::Waiting, QueueState::Dropped},
    {QueueState::Old, QueueState::Dropped},
    {QueueState::OldWaiting, QueueState::Dropped},
    {QueueState::Closed, QueueState::Dropped},
    {QueueState::ClosedWaiting, QueueState::Dropped},
    {QueueState::OldClosed, QueueState::Dropped},
    {QueueState::OldClosedWaiting, QueueState::Dropped},
};

constexpr transport::RingGeometry kGeometry{.capacity = 8, .slot_size = 64};

// A queue in shared memory, both ends: the test publishes, the set reads.
struct TestQueue {
  TestQueue(const std::string& segment_name, std::uint64_t peer, std::uint64_t identity,
            std::uint64_t order, QueueState first)
      : name(segment_name) {
    auto segment = ferry::test::test_ring(segment_name, kGeometry);
    producer.emplace(*transport::RingProducer::attach(segment.payload(), segment.payload_size()));
    auto consumer = transport::RingConsumer::attach(segment.payload(), segment.payload_size());
    REQUIRE(consumer.has_value());
    end = std::make_unique<SubscriberQueueEnd>(
        SubscriberQueueEnd{peer, 0, std::move(segment), std::move(*consumer)});
    end->peer_identity = identity;
    end->match_order = order;
    end->state = first;
  }
  ~TestQueue() { transport::Segment::remove(name); }
  TestQueue(const TestQueue&) = delete;
  TestQueue& operator=(const TestQueue&) = delete;

  void push(std::uint32_t value) {
    std::array<std::byte, 4> bytes{};
    std::memcpy(bytes.data(), &value, sizeof value);
    REQUIRE(producer->try_push(bytes, 0, transport::SlotMeta{}).has_value());
  }

  std::string name;
  std::optional<transport::RingProducer> producer;
  std::unique_ptr<SubscriberQueueEnd> end;  // moved into the set
};

std::string ring_name(const char* what) {
  return "ferry.test_queue_state." + std::to_string(::getpid()) + "." + what;
}

// The state the last queue dropped by take_one was in when it was dropped.
QueueState last_state_seen = QueueState::Live;

// One take: the first sample of a round, with the peer it came from.
struct Took {
  std::uint64_t peer = 0;
  std::uint32_t value = 0;
};
// Takes one sample (QueueSet::round as pop_next does it), dropping the
// drained Closed queues; peer 0 when every queue was empty.
Took take_one(QueueSet& set, std::vector<std::uint64_t>* dropped = nullptr) {
  Took took;
  std::array<std::byte, 64> buffer{};
  const auto end = set.round([&](SubscriberQueueEnd& q) {
    std::uint32_t flags = 0;
    const auto popped = q.consumer.try_pop(buffer, &flags);
    if (!popped) return Visited::Empty;
    took.peer = q.peer;
    std::memcpy(&took.value, buffer.data(), sizeof took.value);
    return Visited::Done;
  });
  if (end.drained) {
    set.drop_drained([&](const SubscriberQueueEnd& q) {
      last_state_seen = q.state;
      if (dropped != nullptr) dropped->push_back(q.peer);
    });
  }
  return took;
}

}  // namespace

TEST_CASE("the queue state table: each legal move is allowed, every other move refused") {
  ferry::test::check_table<QueueState>(kAll, kLegal, queue_move_legal);
}

TEST_CASE("the events of the table lead where it says") {
  CHECK(aged(QueueState::Live) == QueueState::Old);
  CHECK(aged(QueueState::Waiting) == QueueState::OldWaiting);
  CHECK_FALSE(queue_move_legal(QueueState::Closed, aged(QueueState::Closed)));
  CHECK_FALSE(queue_move_legal(QueueState::Old, aged(QueueState::Old)));
  CHECK(closed_by_publisher(QueueState::Old) == QueueState::OldClosed);
  CHECK(closed_by_publisher(QueueState::Closed) == QueueState::Closed);  // a second word: no move
  CHECK(wait_over(QueueState::OldClosedWaiting) == QueueState::OldClosed);
  CHECK_FALSE(queue_move_legal(QueueState::Live, wait_over(QueueState::Live)));
  CHECK(waits(QueueState::ClosedWaiting));
  CHECK(from_previous_daemon(QueueState::OldWaiting));
  CHECK(closed(QueueState::OldClosedWaiting));
  CHECK_FALSE(closed(QueueState::Old));
  QueueState state = QueueState::Waiting;
  advance(state, QueueState::OldWaiting);
  advance(state, QueueState::Old);
  advance(state, QueueState::OldClosed);
  advance(state, QueueState::Dropped);
  CHECK(state == QueueState::Dropped);
}

#if FERRY_CHECKED
TEST_CASE("an illegal move aborts in a checked build") {
  const auto aborts = ferry::test::move_aborts<QueueState>;
  CHECK(aborts(QueueState::Dropped, QueueState::Live));
  CHECK(aborts(QueueState::Closed, QueueState::Live));
  CHECK(aborts(QueueState::Live, QueueState::Waiting));
  CHECK_FALSE(aborts(QueueState::Live, QueueState::Closed));
}
#endif

TEST_CASE("a round takes fairly: each queue in turn, from after the last that gave") {
  TestQueue a(ring_name("fair.a"), 1, 1, 1, QueueState::Live);
  TestQueue b(ring_name("fair.b"), 2, 2, 2, QueueState::Live);
  for (std::uint32_t i = 0; i < 3; ++i) {
    a.push(10 + i);
    b.push(20 + i);
  }
  QueueSet set;
  set.add(std::move(a.end));
  set.add(std::move(b.end));
  std::vector<std::uint32_t> got;
  for (Took t = take_one(set); t.peer != 0; t = take_one(set)) got.push_back(t.value);
  CHECK(got == std::vector<std::uint32_t>{10, 20, 11, 21, 12, 22});
  CHECK_FALSE(set.any_ready());
  CHECK_FALSE(set.any_data());
}

TEST_CASE("a Waiting queue is read once its publisher's old queue is finished and drained") {
  // The old queue (match order 1) and its replacement (2) from the same
  // publisher (identity 7), after a ferryd restart.
  TestQueue old_queue(ring_name("wait.old"), 1, 7, 1, QueueState::Live);
  TestQueue next(ring_name("wait.new"), 2, 7, 2, QueueState::Waiting);
  old_queue.push(1);
  next.push(2);  // published after the switch
  QueueSet set;
  set.add(std::move(old_queue.end));
  set.age(1);  // the restart
  CHECK(set.front().state == QueueState::Old);
  set.add(std::move(next.end));
  CHECK(set.lone_live() == nullptr);  // two queues: no lane

  Took t = take_one(set);
  CHECK(t.peer == 1);
  CHECK(t.value == 1);
  // The old queue is empty but not finished: the new one still waits.
  CHECK(take_one(set).peer == 0);
  CHECK(set.any_ready());  // an Old queue sends the poll the long way
  CHECK_FALSE(set.any_data());

  old_queue.producer->close();  // the publisher switched
  CHECK(set.any_data());        // the round retires the finished queue
  // That round retires and drops the finished queue; the next reads the new one.
  std::vector<std::uint64_t> dropped;
  CHECK(take_one(set, &dropped).peer == 0);
  CHECK(dropped == std::vector<std::uint64_t>{1});
  CHECK(last_state_seen == QueueState::OldClosed);  // the port removes an old ring's name
  t = take_one(set);
  CHECK(t.peer == 2);
  CHECK(t.value == 2);
  REQUIRE(set.size() == 1);
  CHECK(set.front().state == QueueState::Live);
  CHECK(set.lone_live() == &set.front());
}

TEST_CASE("a Closed queue delivers what it holds, then is dropped; the lane wants a Live one") {
  TestQueue a(ring_name("closed.a"), 1, 1, 1, QueueState::Live);
  a.push(5);
  QueueSet set;
  set.add(std::move(a.end));
  CHECK(set.lone_live() == &set.front());
  set.close(1);
  set.close(1);  // a second word of the same departure changes nothing
  CHECK(set.front().state == QueueState::Closed);
  CHECK(set.lone_live() == nullptr);
  std::vector<std::uint64_t> dropped;
  CHECK(take_one(set, &dropped).value == 5);
  CHECK(dropped.empty());
  CHECK(take_one(set, &dropped).peer == 0);
  CHECK(dropped == std::vector<std::uint64_t>{1});
  CHECK(set.empty());

  TestQueue b(ring_name("closed.b"), 2, 2, 2, QueueState::Waiting);
  set.add(std::move(b.end));
  CHECK(set.lone_live() == &set.front());  // alone, it waits for none
  std::size_t gone = 0;
  set.clear([&](SubscriberQueueEnd&) { ++gone; });
  CHECK(gone == 1);
  CHECK(set.empty());
}
