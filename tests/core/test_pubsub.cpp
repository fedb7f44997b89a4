// Publish/subscribe across processes through a real ferryd: matching in any
// order, fan-out and fan-in with per-publisher order, and the three
// full-queue policies with their counters.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

// Exit codes of the children, so a failure says what went wrong.
enum : int { kOk = 0, kNoMatch = 10, kLost = 11, kOrder = 12, kTorn = 13, kCount = 14 };

// Takes `count` samples (or until `idle` passes with none); checks each
// publisher's order and integrity. Raises `port_made` once its port exists.
int subscribe_and_check(const std::string& topic, std::uint64_t count, std::uint32_t publishers,
                        std::chrono::milliseconds idle = 5s, const Signal* port_made = nullptr) {
  ferry::Node node{"sub"};
  auto sub = node.subscriber<Seq>(topic);
  if (port_made != nullptr) port_made->raise();
  std::map<std::uint64_t, std::uint64_t> next;  // publisher -> expected seq
  std::uint64_t taken = 0;
  while (taken < count) {
    auto s = sub.take(idle);
    if (!s) return kLost;
    if (!intact(**s)) return kTorn;
    auto& expected = next[(*s)->publisher];
    if ((*s)->seq != expected) return kOrder;
    ++expected;
    ++taken;
  }
  return next.size() == publishers ? kOk : kCount;
}

int publish_n(const std::string& topic, std::uint64_t id, std::uint64_t count,
              std::uint32_t subscribers, const Signal* port_made = nullptr) {
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>(topic);
  if (port_made != nullptr) port_made->raise();
  if (!pub.wait_for_subscribers(subscribers, std::chrono::seconds(10))) return kNoMatch;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto r = pub.publish(make_seq(id, i));
    if (r.delivered != subscribers) return kLost;
  }
  return kOk;
}

}  // namespace

TEST_CASE("a subscriber that joins after the publisher receives every sample in order") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 64, policy: block }\n"));
  Signal publisher_made;
  Child pub([&] { return publish_n("t", 1, 10000, 1, &publisher_made); });
  REQUIRE(publisher_made.wait());
  Child sub([] { return subscribe_and_check("t", 10000, 1); });
  CHECK(sub.wait() == kOk);
  CHECK(pub.wait() == kOk);
}

TEST_CASE("a publisher that joins after the subscriber is matched and delivers") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 64, policy: block }\n"));
  Signal subscriber_made;
  Child sub([&] { return subscribe_and_check("t", 10000, 1, 5s, &subscriber_made); });
  REQUIRE(subscriber_made.wait());
  Child pub([] { return publish_n("t", 1, 10000, 1); });
  CHECK(sub.wait() == kOk);
  CHECK(pub.wait() == kOk);
}

TEST_CASE(
    "two publishers and three subscribers: every subscriber gets each publisher's samples in "
    "order") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 32, policy: block }\n"));
  constexpr std::uint64_t kPerPublisher = 20000;
  std::vector<Child> subs;
  for (int i = 0; i < 3; ++i) {
    subs.emplace_back([] { return subscribe_and_check("t", 2 * kPerPublisher, 2); });
  }
  Child pub1([] { return publish_n("t", 1, kPerPublisher, 3); });
  Child pub2([] { return publish_n("t", 2, kPerPublisher, 3); });
  for (auto& s : subs) CHECK(s.wait() == kOk);
  CHECK(pub1.wait() == kOk);
  CHECK(pub2.wait() == kOk);
}

TEST_CASE("block: a million samples to a slower subscriber, none lost, in order, no timeouts") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 64, policy: block, "
                 "block_timeout_ms: 5000 }\n"));
  const std::uint64_t n = scaled(1000000, 10);
  Child sub([n] {
    ferry::Node node{"slow"};
    auto subscriber = node.subscriber<Seq>("t");
    for (std::uint64_t i = 0; i < n; ++i) {
      auto s = subscriber.take(5s);
      if (!s) return int{kLost};
      if ((*s)->seq != i || !intact(**s)) return int{kOrder};
      if (i % 1024 == 0) std::this_thread::sleep_for(100us);  // slower than the publisher
    }
    return int{kOk};
  });
  Child pub([n] {
    ferry::Node node{"fast"};
    auto publisher = node.publisher<Seq>("t");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return int{kNoMatch};
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto r = publisher.publish(make_seq(0, i));
      if (r.delivered != 1 || r.timed_out != 0 || r.dropped != 0) return int{kLost};
    }
    return int{kOk};
  });
  CHECK(pub.wait(120s) == kOk);
  CHECK(sub.wait(120s) == kOk);
}

TEST_CASE(
    "block: a subscriber that never takes costs timed_out after block_timeout_ms, not a hang") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 4, policy: block, "
                 "block_timeout_ms: 200 }\n"));
  ferry::Node node{"test"};
  auto sub = node.subscriber<Seq>("t");  // never takes
  auto pub = node.publisher<Seq>("t");
  // Both ends matched: the subscriber takes from the queue as soon as it returns.
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
  for (int i = 0; i < 4; ++i) CHECK(pub.publish(make_seq(0, i)).delivered == 1);
  const auto start = std::chrono::steady_clock::now();
  const auto r = pub.publish(make_seq(0, 4));
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out == 1);
  CHECK(r.delivered == 0);
  CHECK(waited >= 190ms);
  CHECK(waited < 2s);
  // The four queued samples are intact and come out in order.
  for (std::uint64_t i = 0; i < 4; ++i) {
    auto s = sub.take();
    REQUIRE(s);
    CHECK((*s)->seq == i);
  }
}

TEST_CASE("drop_new: delivered + dropped == published, and every delivered sample is taken") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 8, policy: drop_new }\n"));
  ferry::Node node{"test"};
  auto sub = node.subscriber<Seq>("t");
  auto pub = node.publisher<Seq>("t");
  // Both ends matched: the subscriber takes from the queue as soon as it returns.
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
  std::uint64_t delivered = 0, dropped = 0;
  for (std::uint64_t i = 0; i < 100; ++i) {
    const auto r = pub.publish(make_seq(0, i));
    delivered += r.delivered;
    dropped += r.dropped;
    CHECK(r.overwritten == 0);
  }
  CHECK(delivered + dropped == 100);
  CHECK(delivered == 8);  // the queue took the first eight and refused the rest
  std::uint64_t taken = 0;
  while (auto s = sub.take()) {
    CHECK((*s)->seq == taken);  // the oldest eight, in order
    ++taken;
  }
  CHECK(taken == delivered);
}

TEST_CASE(
    "drop_oldest: the subscriber always ends with the newest samples; taken + overwritten == "
    "published") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 8, policy: drop_oldest }\n"));
  ferry::Node node{"test"};
  auto sub = node.subscriber<Seq>("t");
  auto pub = node.publisher<Seq>("t");
  // Both ends matched: the subscriber takes from the queue as soon as it returns.
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
  std::uint64_t overwritten = 0;
  for (std::uint64_t i = 0; i < 100; ++i) {
    const auto r = pub.publish(make_seq(0, i));
    CHECK(r.delivered == 1);
    overwritten += r.overwritten;
  }
  std::uint64_t taken = 0, last = 0;
  while (auto s = sub.take()) {
    last = (*s)->seq;
    ++taken;
  }
  CHECK(last == 99);
  CHECK(taken == 8);
  CHECK(taken + overwritten == 100);
}

TEST_CASE(
    "drop_oldest across processes: racing subscriber sees no torn, duplicated or reordered "
    "sample") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 4, policy: drop_oldest }\n"));
  const std::uint64_t n = scaled(200000, 10);
  Child sub([n] {
    ferry::Node node{"sub"};
    auto subscriber = node.subscriber<Seq>("t");
    std::int64_t last = -1;
    while (true) {
      auto s = subscriber.take(2s);
      if (!s) return int{kLost};
      if (!intact(**s)) return int{kTorn};
      if (static_cast<std::int64_t>((*s)->seq) <= last) return int{kOrder};
      last = static_cast<std::int64_t>((*s)->seq);
      if ((*s)->seq == n - 1) return int{kOk};
    }
  });
  Child pub([n] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Seq>("t");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return int{kNoMatch};
    for (std::uint64_t i = 0; i < n; ++i) {
      if (publisher.publish(make_seq(0, i)).delivered != 1) return int{kLost};
    }
    return int{kOk};
  });
  CHECK(pub.wait() == kOk);
  CHECK(sub.wait() == kOk);
}

TEST_CASE("a publisher that exits right after publishing still delivers what it published") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 256, policy: block }\n"));
  Child pub([] { return publish_n("t", 0, 200, 1); });  // forked before this process has a node
  ferry::Node node{"test"};
  auto sub = node.subscriber<Seq>("t");
  CHECK(pub.wait() == kOk);
  for (std::uint64_t i = 0; i < 200; ++i) {
    auto s = sub.take(2s);
    REQUIRE(s);
    CHECK((*s)->seq == i);
  }
  CHECK(eventually([&] { return sub.publisher_count() == 0; }));
  CHECK_FALSE(sub.take());
}

TEST_CASE("a subscriber drains its publishers' queues in turn, so none starves another") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 16, policy: drop_new }\n"));
  ferry::Node node{"test"};
  auto sub = node.subscriber<Seq>("t");
  auto pub_a = node.publisher<Seq>("t");
  auto pub_b = node.publisher<Seq>("t");
  REQUIRE(eventually([&] { return sub.publisher_count() == 2 && pub_b.subscriber_count() == 1; }));
  for (std::uint64_t i = 0; i < 8; ++i) pub_a.publish(make_seq(1, i));
  for (std::uint64_t i = 0; i < 8; ++i) pub_b.publish(make_seq(2, i));
  std::vector<std::uint64_t> order;
  while (auto s = sub.take()) order.push_back((*s)->publisher);
  REQUIRE(order.size() == 16);
  for (std::size_t i = 1; i < order.size(); ++i) CHECK(order[i] != order[i - 1]);
}

TEST_CASE(
    "samples outlive their subscriber and node, released on another thread, and stay intact") {
  TestDomain domain;
  Daemon daemon(
      domain, seq_config("  - { name: t, type: Seq, capacity: 8, policy: block, max_held: 4 }\n"));
  ferry::test::use_domain_env(domain);
  std::vector<ferry::Sample<Seq>> kept;
  {
    ferry::Node node{"n"};
    auto pub = node.publisher<Seq>("t");
    auto sub = node.subscriber<Seq>("t");
    REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
    for (std::uint64_t i = 0; i < 20; ++i) {
      REQUIRE(pub.publish(make_seq(7, i)).delivered == 1);
      auto s = sub.take(1s);
      REQUIRE(s);
      CHECK((*s)->seq == i);
      if (i >= 17) kept.push_back(std::move(*s));  // three held when the subscriber goes
    }
  }
  // The subscriber and its node are gone; the samples' buffers are not.
  for (std::size_t i = 0; i < kept.size(); ++i) {
    CHECK(intact(*kept[i]));
    CHECK(kept[i]->seq == 17 + i);
  }
  std::thread([&] { kept.clear(); }).join();
  // A new subscriber (its creation sweeps the closed ones) works as usual.
  ferry::Node node{"again"};
  auto pub = node.publisher<Seq>("t");
  auto sub = node.subscriber<Seq>("t");
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
  REQUIRE(pub.publish(make_seq(8, 0)).delivered == 1);
  auto s = sub.take(1s);
  REQUIRE(s);
  CHECK((*s)->publisher == 8);
}
