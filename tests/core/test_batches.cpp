// Batches (docs/batches.md) across processes through a real ferryd:
// publish_many / take_many keep every sample once and in order, mixed with
// single publishes and takes; the policies apply per sample with exact
// accounting when a batch is larger than the queue; block reports exactly
// what each queue missed at its deadline; history and a ferryd restart keep
// the order.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "port_children.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

enum : int { kOk = 0, kNoMatch = 10, kLost = 11, kOrder = 12, kTorn = 13, kCount = 14, kInfo = 15 };

// Bytes topics have no publish_many / take_many: a compile-time refusal.
template <class T>
concept can_publish_many = requires(ferry::Publisher<T>& p, std::span<const T> s) {
  p.publish_many(s);
};
template <class T>
concept can_take_many = requires(ferry::Subscriber<T>& s, std::span<T> out) {
  s.take_many(out);
};
static_assert(can_publish_many<Seq> && can_take_many<Seq>);
static_assert(!can_publish_many<ferry::Bytes> && !can_take_many<ferry::Bytes>);

std::vector<Seq> seqs(std::uint64_t publisher, std::uint64_t first, std::size_t n) {
  std::vector<Seq> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(make_seq(publisher, first + i));
  return v;
}

// Takes everything queued (take_many until empty), as sequence numbers. The
// first take waits: our node may learn of the publisher's queue after the
// publisher did.
std::vector<std::uint64_t> drain(ferry::Subscriber<Seq>& sub) {
  std::vector<std::uint64_t> got;
  std::array<Seq, 64> out{};
  for (auto wait = std::chrono::nanoseconds(10s);; wait = {}) {
    const std::size_t n = sub.take_many(out, wait).value();
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) got.push_back(out[i].seq);
  }
  return got;
}

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE(
    "10 M samples in random batches of 1..300 mixed with single publishes reach two subscriber "
    "processes once each, in order") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 256, policy: block, "
                 "block_timeout_ms: 10000 }\n"));
  const std::uint64_t total = ferry::test::scaled(10'000'000, 10);
  // One subscriber takes in batches of random sizes, the other mixes
  // take_many with single takes (and checks SampleInfo on those).
  auto subscriber = [total](bool mixed) {
    return [total, mixed] {
      ferry::Node node{mixed ? "mixed" : "batched"};
      auto sub = node.subscriber<Seq>("t");
      std::mt19937 rng(mixed ? 7 : 11);
      std::vector<Seq> buf(512);
      std::uint64_t next = 0;
      while (next < total) {
        if (mixed && rng() % 4 == 0) {
          auto s = sub.take(10s);
          if (!s) return int{kLost};
          if (!intact(**s)) return int{kTorn};
          if ((*s)->seq != next || s->info().sequence != next) return int{kOrder};
          ++next;
          continue;
        }
        const std::size_t want = 1 + rng() % buf.size();
        const std::size_t n = sub.take_many(std::span(buf.data(), want), 10s).value();
        if (n == 0) return int{kLost};
        if (n > want) return int{kCount};
        for (std::size_t i = 0; i < n; ++i) {
          if (!intact(buf[i])) return int{kTorn};
          if (buf[i].seq != next++) return int{kOrder};
        }
      }
      // Nothing more may come: every sample arrived exactly once.
      return sub.take(50ms) ? int{kCount} : int{kOk};
    };
  };
  Child batched(subscriber(false));
  Child mixed(subscriber(true));
  Child pub([total] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Seq>("t");
    if (!publisher.wait_for_subscribers(2, std::chrono::seconds(10))) return int{kNoMatch};
    std::mt19937 rng(3);
    std::vector<Seq> batch(300);
    std::uint64_t seq = 0;
    while (seq < total) {
      if (rng() % 8 == 0) {
        const auto r = publisher.publish(make_seq(0, seq++));
        if (r.delivered != 2) return int{kLost};
        continue;
      }
      const std::size_t n = std::min<std::uint64_t>(1 + rng() % 300, total - seq);
      for (std::size_t i = 0; i < n; ++i) batch[i] = make_seq(0, seq++);
      const auto r = publisher.publish_many(std::span(batch.data(), n));
      if (r.delivered != 2 * n || r.timed_out != 0 || r.dropped != 0) return int{kLost};
    }
    return int{kOk};
  });
  CHECK(pub.wait(600s) == kOk);
  CHECK(batched.wait(600s) == kOk);
  CHECK(mixed.wait(600s) == kOk);
}

TEST_CASE("an empty batch is a no-op: no sample, no sequence number used") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 16, policy: block }\n"));
  Signal matched;
  Child sub = subscriber_child<Seq>("sub", "t", matched, [&](ferry::Subscriber<Seq>& subscriber) {
    std::array<Seq, 4> out{};
    if (subscriber.take_many(std::span(out.data(), 0), 100ms) != 0) return int{kCount};
    auto s = subscriber.take(10s);
    if (!s) return int{kLost};
    return (*s)->seq == 5 && s->info().sequence == 0 ? int{kOk} : int{kInfo};
  });
  REQUIRE(matched.wait());
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>("t");
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  const auto r = pub.publish_many(std::span<const Seq>());
  CHECK(r.delivered == 0);
  CHECK(r.dropped == 0);
  CHECK(!r.error);
  CHECK(pub.publish(make_seq(0, 5)).delivered == 1);
  CHECK(sub.wait() == kOk);
}

TEST_CASE(
    "drop_new with batches larger than the queue: the first that fit, the rest dropped, per "
    "queue") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 16, policy: drop_new }\n"));
  Signal ready;
  Signal published;
  // Two subscriber processes that take only once the batches are out.
  auto reader = [&] {
    ferry::Node node{"sub"};
    auto sub = node.subscriber<Seq>("t");
    ready.raise();
    if (!published.wait(20s)) return int{kLost};
    // The 10 of the first batch, then the 6 of the 40 that fitted.
    return drain(sub) == range(0, 16) ? int{kOk} : int{kOrder};
  };
  Child a(reader);
  Child b(reader);
  REQUIRE(ready.wait());
  REQUIRE(ready.wait());
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>("t");
  REQUIRE(pub.wait_for_subscribers(2, std::chrono::seconds(10)));
  const auto ten = seqs(0, 0, 10);
  auto r = pub.publish_many(ten);
  CHECK(r.delivered == 20);
  CHECK(r.dropped == 0);
  const auto forty = seqs(0, 10, 40);
  r = pub.publish_many(forty);
  CHECK(r.delivered == 2 * 6);
  CHECK(r.dropped == 2 * 34);
  CHECK(r.overwritten == 0);
  CHECK(r.timed_out == 0);
  published.raise();
  published.raise();
  CHECK(a.wait() == kOk);
  CHECK(b.wait() == kOk);
}

TEST_CASE("drop_oldest with a batch larger than the queue keeps the newest capacity samples") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 16, policy: drop_oldest }\n"));
  Signal ready;
  Signal published;
  Child sub = subscriber_child<Seq>("sub", "t", ready, [&](ferry::Subscriber<Seq>& subscriber) {
    if (!published.wait(20s)) return int{kLost};
    // Single takes: the SampleInfo sequence of the kept ones is theirs.
    for (std::uint64_t i = 29; i < 45; ++i) {
      auto s =
          subscriber.take(i == 29 ? std::chrono::nanoseconds(10s) : std::chrono::nanoseconds{});
      if (!s) return int{kLost};
      if ((*s)->seq != i || s->info().sequence != i || !intact(**s)) return int{kOrder};
    }
    return subscriber.take() ? int{kCount} : int{kOk};
  });
  REQUIRE(ready.wait());
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>("t");
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  for (std::uint64_t i = 0; i < 5; ++i) REQUIRE(pub.publish(make_seq(0, i)).delivered == 1);
  const auto forty = seqs(0, 5, 40);
  const auto r = pub.publish_many(forty);
  CHECK(r.delivered == 40);
  // 5 queued + 40 into 16 slots: 29 samples overwritten, as 40 single publishes would.
  CHECK(r.overwritten == 29);
  CHECK(r.dropped == 0);
  published.raise();
  CHECK(sub.wait() == kOk);
}

TEST_CASE("block timing out mid-batch reports exactly how many samples each queue missed") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 8, policy: block, "
                 "block_timeout_ms: 300 }\n"));
  Signal ready;
  Signal release;
  // A subscriber that keeps up, and one that takes nothing until told.
  Child fast = subscriber_child<Seq>("fast", "t", ready, [&](ferry::Subscriber<Seq>& sub) {
    std::array<Seq, 5> out{};
    std::uint64_t next = 0;
    while (next < 40) {
      const std::size_t n = sub.take_many(out, 10s).value();
      if (n == 0) return int{kLost};
      for (std::size_t i = 0; i < n; ++i) {
        if (out[i].seq != next++) return int{kOrder};
      }
    }
    return int{kOk};
  });
  Child stalled = subscriber_child<Seq>("stalled", "t", ready, [&](ferry::Subscriber<Seq>& sub) {
    if (!release.wait(20s)) return int{kLost};
    return drain(sub) == range(0, 8) ? int{kOk} : int{kOrder};
  });
  REQUIRE(ready.wait());
  REQUIRE(ready.wait());
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>("t");
  REQUIRE(pub.wait_for_subscribers(2, std::chrono::seconds(10)));
  const auto forty = seqs(0, 0, 40);
  const auto start = std::chrono::steady_clock::now();
  const auto r = pub.publish_many(forty);
  const auto took = std::chrono::steady_clock::now() - start;
  release.raise();
  // The fast queue took all 40; the stalled one its 8 slots, 32 timed out.
  CHECK(r.delivered == 48);
  CHECK(r.timed_out == 32);
  CHECK(r.dropped == 0);
  CHECK(took >= 300ms);
  CHECK(took < 3s);
  CHECK(fast.wait() == kOk);
  CHECK(stalled.wait() == kOk);
}

TEST_CASE(
    "history: a late subscriber gets the newest samples of a batch, then live batches, in order") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 16, policy: block, "
                 "history: 4 }\n"));
  Signal first;
  Signal joined;
  Signal more;
  // Forked before this process has a node of its own.
  Child late([&] {
    if (!first.wait(20s)) return int{kNoMatch};
    ferry::Node n{"late"};
    auto sub = n.subscriber<Seq>("t");
    if (!eventually([&] { return sub.publisher_count() == 1; })) return int{kNoMatch};
    joined.raise();
    if (!more.wait(20s)) return int{kLost};
    std::vector<std::uint64_t> got;
    std::array<Seq, 3> out{};
    while (got.size() < 4 + 7) {
      const std::size_t k = sub.take_many(out, 5s).value();
      if (k == 0) return int{kLost};
      for (std::size_t i = 0; i < k; ++i) got.push_back(out[i].seq);
    }
    return got == range(6, 17) ? int{kOk} : int{kOrder};
  });
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>("t");
  CHECK(pub.publish_many(seqs(0, 0, 10)).delivered == 0);  // nobody yet: history only
  first.raise();
  REQUIRE(joined.wait());
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.publish(make_seq(0, 10)).delivered == 1);
  CHECK(pub.publish_many(seqs(0, 11, 6)).delivered == 6);
  more.raise();
  CHECK(late.wait() == kOk);
}

TEST_CASE("batches keep their order across a ferryd restart") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 64, policy: block, "
                 "block_timeout_ms: 10000 }\n",
                 "liveness: { heartbeat_ms: 20, timeout_ms: 500 }\n"));
  const std::uint64_t total = 20000;
  Signal progress;
  Child pub([&] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Seq>("t");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return int{kNoMatch};
    std::mt19937 rng(5);
    std::vector<Seq> batch(20);
    std::uint64_t seq = 0;
    while (seq < total) {
      const std::size_t n = std::min<std::uint64_t>(1 + rng() % batch.size(), total - seq);
      if (n == 1) {
        if (publisher.publish(make_seq(0, seq++)).delivered < 1) return int{kLost};
      } else {
        for (std::size_t i = 0; i < n; ++i) batch[i] = make_seq(0, seq++);
        if (publisher.publish_many(std::span(batch.data(), n)).delivered < n) return int{kLost};
      }
      std::this_thread::sleep_for(1ms);
    }
    std::this_thread::sleep_for(500ms);  // the subscriber drains what is queued
    return int{kOk};
  });
  Child sub([&] {
    ferry::Node node{"sub"};
    auto subscriber = node.subscriber<Seq>("t");
    std::array<Seq, 32> out{};
    std::uint64_t next = 0;
    while (next < total) {
      const std::size_t n = subscriber.take_many(out, 5s).value();
      if (n == 0) return int{kLost};
      for (std::size_t i = 0; i < n; ++i) {
        if (out[i].seq != next) return int{kOrder};
        if (++next % 2000 == 0) progress.raise();
      }
    }
    return int{kOk};
  });
  REQUIRE(progress.wait(30s));
  served.daemon.kill9();
  REQUIRE(progress.wait(30s));  // batches flow with no daemon at all
  served.daemon.start();        // the nodes reconnect, each queue is replaced
  REQUIRE(progress.wait(30s));
  REQUIRE(progress.wait(30s));
  CHECK(sub.wait(120s) == kOk);
  CHECK(pub.wait(120s) == kOk);
}
