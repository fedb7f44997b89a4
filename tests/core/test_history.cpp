// `history: N`: a subscriber that joins late gets the publisher's last N
// samples, in order, before the live ones, with no gap and no duplicate;
// pooled history keeps exactly N chunks and gives them back. Also: a
// publisher killed while sending pooled samples leaves no chunk behind once
// its subscriber has drained what it sent.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "daemon_fixture.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: latched, type: Seq, capacity: 8, policy: block, history: 3 }\n"
    "  - { name: none, type: Seq, capacity: 8, policy: block }\n"
    "  - { name: stream, type: Seq, capacity: 64, policy: block, history: 16 }\n"
    "  - { name: blobs, type: bytes, max_size: 64KiB, capacity: 4, policy: drop_oldest, history: 2 "
    "}\n"
    "  - { name: frames, type: bytes, max_size: 64KiB, capacity: 4, policy: drop_oldest }\n",
    "pool:\n"
    "  - { chunk_size: 64KiB, count: 48 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

// Bytes sample i: 10,000 + i bytes (too large for a slot: pooled), each
// byte a function of i and its position.
std::size_t blob_size(std::uint64_t i) { return 10'000 + i; }
std::byte blob_byte(std::uint64_t i, std::size_t at) {
  return static_cast<std::byte>((i * 31 + at * 7) & 0xFF);
}
bool blob_intact(std::uint64_t i, std::span<const std::byte> data) {
  if (data.size() != blob_size(i)) return false;
  for (std::size_t at = 0; at < data.size(); ++at) {
    if (data[at] != blob_byte(i, at)) return false;
  }
  return true;
}

std::uint64_t chunks_in_use(const std::string& domain) {
  const auto c = ferry::test::pool_count(domain);
  return c.total - c.free;
}

}  // namespace

TEST_CASE_FIXTURE(
    Served, "a late subscriber gets the last N samples at once, in order, then the live ones") {
  Signal published;
  Signal go;
  Signal done;
  Child pub([&] {
    ferry::Node node{"pub"};
    auto latched = node.publisher<Seq>("latched");
    auto none = node.publisher<Seq>("none");
    for (std::uint64_t i = 0; i < 5; ++i) {
      if (latched.publish(make_seq(1, i)).delivered != 0) return 1;  // nobody yet
      none.publish(make_seq(2, i));
    }
    published.raise();
    // Silent now: the late joiner must get the history without a publish.
    if (!go.wait()) return 2;
    for (std::uint64_t i = 5; i < 10; ++i) {
      if (latched.publish(make_seq(1, i)).delivered != 1) return 3;
    }
    return done.wait() ? 0 : 4;
  });
  REQUIRE(published.wait());
  ferry::Node node{"late"};
  auto sub = node.subscriber<Seq>("latched");
  auto sub_none = node.subscriber<Seq>("none");
  for (std::uint64_t i = 2; i < 5; ++i) {  // the last 3 of 0..4
    auto s = sub.take(2s);
    REQUIRE(s);
    CHECK(intact(**s));
    CHECK((*s)->seq == i);
  }
  CHECK_FALSE(sub.take(100ms));
  CHECK_FALSE(sub_none.take(100ms));  // no history: nothing of the past
  go.raise();
  for (std::uint64_t i = 5; i < 10; ++i) {
    auto s = sub.take(2s);
    REQUIRE(s);
    CHECK((*s)->seq == i);
  }
  CHECK_FALSE(sub.take(50ms));
  done.raise();
  CHECK(pub.wait() == 0);
}

TEST_CASE_FIXTURE(
    Served, "joining a busy publisher: history then live, consecutive, no gap, no duplicate") {
  const std::uint64_t n = scaled(200'000, 10);
  Signal mid_stream;
  Signal read_all;
  // Publishes without pause: n samples more once the late subscriber is
  // matched, the last one marked as publisher 2.
  Child pub([&] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Seq>("stream");
    std::uint64_t end = 0;
    for (std::uint64_t i = 0;; ++i) {
      const bool last = end != 0 && i == end;
      publisher.publish(make_seq(last ? 2 : 1, i));
      if (last) break;
      if (i == 100) mid_stream.raise();  // the history (16) is full and the stream goes on
      if (end == 0 && publisher.subscriber_count() == 1) end = i + n;
    }
    // Block policy: once matched, nothing is dropped; stay until it is read.
    return read_all.wait(30s) ? 0 : 1;
  });
  REQUIRE(mid_stream.wait());
  ferry::Node node{"late"};
  auto sub = node.subscriber<Seq>("stream");
  auto first = sub.take(5s);
  REQUIRE(first);
  CHECK((*first)->seq > 0);  // joined mid-stream: the history, not the start
  std::uint64_t last = (*first)->seq;
  std::uint64_t received = 1;
  std::uint64_t broken = 0;
  for (bool ended = (*first)->publisher == 2; !ended; ++received) {
    auto s = sub.take(5s);
    REQUIRE(s);
    if ((*s)->seq != last + 1 || !intact(**s)) ++broken;
    last = (*s)->seq;
    ended = (*s)->publisher == 2;
  }
  CHECK(broken == 0);
  CHECK(received > n);  // everything published after the match, and some history before
  read_all.raise();
  CHECK(pub.wait() == 0);
}

TEST_CASE_FIXTURE(
    Served, "pooled history keeps exactly N chunks for late joiners and gives them all back") {
  Signal published;
  Signal done;
  Child pub([&] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<ferry::Bytes>("blobs");
    for (std::uint64_t i = 0; i < 6; ++i) {
      auto loan = publisher.loan(blob_size(i));
      if (!loan) return 1;
      for (std::size_t at = 0; at < blob_size(i); ++at) (*loan)->data()[at] = blob_byte(i, at);
      publisher.publish(std::move(*loan));
    }
    published.raise();
    return done.wait() ? 0 : 2;
  });
  REQUIRE(published.wait());
  CHECK(chunks_in_use(domain.name()) == 2);  // the history, nothing else
  {
    ferry::Node node{"late"};
    auto first = node.subscriber<ferry::Bytes>("blobs");
    auto second = node.subscriber<ferry::Bytes>("blobs");
    for (auto* sub : {&first, &second}) {
      for (std::uint64_t i = 4; i < 6; ++i) {
        auto s = sub->take(2s);
        REQUIRE(s);
        CHECK(blob_intact(i, std::span<const std::byte>((*s)->data(), (*s)->size())));
      }
      CHECK_FALSE(sub->take(50ms));
    }
    CHECK(chunks_in_use(domain.name()) == 2);  // shared, not copied
  }
  done.raise();
  CHECK(pub.wait() == 0);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served,
                  "publishers killed while sending pooled samples leave no chunk once drained") {
  ferry::Node node{"sub"};
  auto sub = node.subscriber<ferry::Bytes>("frames");
  std::mt19937 random(20261130);
  for (int round = 0; round < 12; ++round) {
    CAPTURE(round);
    Signal sending;
    Child pub([&] {
      ferry::Node pub_node{"pub"};
      auto publisher = pub_node.publisher<ferry::Bytes>("frames");
      if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
      sending.raise();
      for (std::uint64_t i = 0;; ++i) {  // until killed
        auto loan = publisher.loan(blob_size(i % 64));
        if (!loan) continue;  // the pool may run dry while the reader lags
        std::memset((*loan)->data(), 1, (*loan)->size());
        publisher.publish(std::move(*loan));
      }
    });
    REQUIRE(sending.wait());
    std::uint64_t taken = 0;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::microseconds(random() % 20'000);
    while (std::chrono::steady_clock::now() < until) {
      if (sub.take(1ms)) ++taken;
    }
    pub.kill(SIGKILL);
    CHECK(pub.wait() == 128 + SIGKILL);
    // Drain what the dead publisher queued, until ferryd has told us it is gone.
    CHECK(eventually([&] {
      while (sub.take()) ++taken;
      return sub.publisher_count() == 0;
    }));
    while (sub.take()) ++taken;
    // Everything comes back while this subscriber lives on: its queue's
    // references, and any the publisher gave but never queued.
    CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 5s); }));
  }
}
