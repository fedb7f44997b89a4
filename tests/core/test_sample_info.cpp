// Sample metadata (docs/cpp-api.md) across real processes and a real ferryd:
// sequence numbers without a gap where nothing is lost and with gaps equal
// to what drop_oldest overwrote, a distinct publisher_id per publisher,
// publish_time_ns inside publish()'s window, and the same metadata on
// inline, loaned (pooled) and history samples.
#include <doctest/doctest.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "daemon_fixture.hpp"
#include "port_children.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: steady, type: Seq, capacity: 8, policy: block, block_timeout_ms: 5000 }\n"
    "  - { name: lossy, type: Seq, capacity: 4, policy: drop_oldest }\n"
    "  - { name: latched, type: Seq, capacity: 8, policy: block, history: 3 }\n"
    "  - { name: blobs, type: bytes, max_size: 64KiB, capacity: 4, policy: block, "
    "block_timeout_ms: 5000 }\n",
    "pool:\n"
    "  - { chunk_size: 64KiB, count: 32 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

using ferry::test::ValuePipe;

std::uint64_t now_ns() { return ferry::detail::realtime_ns(); }

// Sample i of publisher p: pad[0] is the clock read just before its
// publish(), pad[1] the clock read just after the previous publish()
// returned: together they bound every publish() from both sides.
Seq stamped(std::uint64_t p, std::uint64_t i, std::uint64_t after_previous) {
  Seq s = make_seq(p, i);
  s.pad[1] = after_previous;
  s.pad[0] = now_ns();
  return s;
}

}  // namespace

TEST_CASE_FIXTURE(
    Served,
    "sequence is 0..N-1 without a gap on a block topic, publish_time_ns inside each publish()") {
  const std::uint64_t n = scaled(5'000, 10);
  Signal subscribed;
  Child pub = publisher_child<Seq>("steady", subscribed, [&](ferry::Publisher<Seq>& publisher) {
    std::uint64_t after = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (publisher.publish(stamped(1, i, after)).delivered != 1) return 2;
      after = now_ns();
    }
    // One more carries the last publish()'s end.
    return publisher.publish(stamped(1, n, after)).delivered == 1 ? 0 : 3;
  });
  ferry::Node node{"sub"};
  auto sub = node.subscriber<Seq>("steady");
  subscribed.raise();
  std::uint64_t publisher_id = 0;
  std::uint64_t previous_time = 0;
  std::uint64_t bad_sequence = 0;
  std::uint64_t bad_window = 0;
  for (std::uint64_t i = 0; i <= n; ++i) {
    auto s = sub.take(5s);
    REQUIRE(s);
    REQUIRE(intact(**s));
    const ferry::SampleInfo& info = s->info();
    if (info.sequence != i || (*s)->seq != i) ++bad_sequence;
    if (i == 0) publisher_id = info.publisher_id;
    CHECK(info.publisher_id == publisher_id);
    // Read before this publish() began, and before the previous one ended.
    if (info.publish_time_ns < (*s)->pad[0]) ++bad_window;
    if (i > 0 && (*s)->pad[1] < previous_time) ++bad_window;
    previous_time = info.publish_time_ns;
  }
  CHECK(publisher_id != 0);
  CHECK(bad_sequence == 0);
  CHECK(bad_window == 0);
  CHECK(pub.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "on a drop_oldest topic the sequence gaps equal what was overwritten") {
  const std::uint64_t n = scaled(20'000, 10);
  Signal subscribed;
  ValuePipe overwritten;
  Child pub = publisher_child<Seq>("lossy", subscribed, [&](ferry::Publisher<Seq>& publisher) {
    std::uint64_t total = 0;
    for (std::uint64_t i = 0; i < n; ++i) total += publisher.publish(make_seq(1, i)).overwritten;
    overwritten.send(total);
    return 0;
  });
  ferry::Node node{"sub"};
  auto sub = node.subscriber<Seq>("lossy");
  subscribed.raise();
  // A slow reader (a pause every 16 samples) against a fast writer; each
  // sample is either taken or overwritten, never both.
  std::uint64_t expected = 0;
  std::uint64_t gaps = 0;
  std::uint64_t taken = 0;
  std::uint64_t out_of_order = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (expected < n && std::chrono::steady_clock::now() < deadline) {
    auto s = sub.take(100ms);
    if (!s) continue;
    const std::uint64_t seq = s->info().sequence;
    if (seq < expected || (*s)->seq != seq) {
      ++out_of_order;
      continue;
    }
    gaps += seq - expected;
    expected = seq + 1;
    if (++taken % 16 == 0) std::this_thread::sleep_for(100us);
  }
  std::uint64_t total = 0;
  REQUIRE(overwritten.receive(total));
  CHECK(out_of_order == 0);
  CHECK(expected == n);  // the newest sample always arrives
  CHECK(total > 0);      // the reader was slow enough to lose some
  CHECK(gaps == total);
  MESSAGE("taken ", taken, ", overwritten ", total);
  CHECK(pub.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "two publishers have distinct publisher_id, each with its own sequence") {
  const std::uint64_t n = scaled(1'000, 10);
  Signal subscribed;
  auto publish = [&](std::uint64_t who) {
    return [&, who] {
      ferry::Node node{"pub" + std::to_string(who)};
      auto publisher = node.publisher<Seq>("steady");
      if (!subscribed.wait() || !publisher.wait_for_subscribers(1, std::chrono::seconds(10)))
        return 1;
      for (std::uint64_t i = 0; i < n; ++i) {
        if (publisher.publish(make_seq(who, i)).delivered != 1) return 2;
      }
      return 0;
    };
  };
  Child a(publish(1));
  Child b(publish(2));
  ferry::Node node{"sub"};
  auto sub = node.subscriber<Seq>("steady");
  subscribed.raise();
  subscribed.raise();
  std::map<std::uint64_t, std::uint64_t> id_of;  // Seq::publisher -> publisher_id
  std::map<std::uint64_t, std::uint64_t> next;   // publisher_id -> next sequence
  std::uint64_t bad = 0;
  for (std::uint64_t k = 0; k < 2 * n; ++k) {
    auto s = sub.take(5s);
    REQUIRE(s);
    const auto& info = s->info();
    auto [it, fresh] = id_of.emplace((*s)->publisher, info.publisher_id);
    if (it->second != info.publisher_id) ++bad;
    if (info.sequence != next[info.publisher_id]++ || info.sequence != (*s)->seq) ++bad;
  }
  CHECK(bad == 0);
  REQUIRE(id_of.size() == 2);
  CHECK(id_of[1] != id_of[2]);
  CHECK(id_of[1] != 0);
  CHECK(id_of[2] != 0);
  CHECK(a.wait() == 0);
  CHECK(b.wait() == 0);
}

TEST_CASE_FIXTURE(
    Served,
    "loaned samples (typed and bytes, through the pool) carry sequence, publisher and time") {
  constexpr std::uint64_t kCount = 40;
  Signal subscribed;
  Child pub([&] {
    ferry::Node node{"pub"};
    auto typed = node.publisher<Seq>("steady");
    auto blobs = node.publisher<ferry::Bytes>("blobs");
    if (!subscribed.wait() || !typed.wait_for_subscribers(1, std::chrono::seconds(10)) ||
        !blobs.wait_for_subscribers(1, std::chrono::seconds(10))) {
      return 1;
    }
    std::uint64_t after = 0;
    for (std::uint64_t i = 0; i < kCount; ++i) {
      // Alternate a copy and a loan on the typed topic: one sequence.
      if (i % 2 == 0) {
        if (typed.publish(stamped(1, i, after)).delivered != 1) return 2;
      } else {
        auto loan = typed.loan();
        if (!loan) return 3;
        **loan = stamped(1, i, after);
        if (typed.publish(std::move(*loan)).delivered != 1) return 4;
      }
      after = now_ns();
      auto blob = blobs.loan(10'000 + i);
      if (!blob) return 5;
      const std::uint64_t before = now_ns();
      std::memcpy((*blob)->data(), &before, sizeof before);
      if (blobs.publish(std::move(*blob)).delivered != 1) return 6;
    }
    return 0;
  });
  ferry::Node node{"sub"};
  auto typed = node.subscriber<Seq>("steady");
  auto blobs = node.subscriber<ferry::Bytes>("blobs");
  subscribed.raise();
  std::uint64_t bad = 0;
  std::set<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < kCount; ++i) {
    auto s = typed.take(5s);
    REQUIRE(s);
    if (s->info().sequence != i || (*s)->seq != i || s->info().publish_time_ns < (*s)->pad[0])
      ++bad;
    ids.insert(s->info().publisher_id);
    auto b = blobs.take(5s);
    REQUIRE(b);
    REQUIRE((*b)->size() == 10'000 + i);
    std::uint64_t before = 0;
    std::memcpy(&before, (*b)->data(), sizeof before);
    if (b->info().sequence != i || b->info().publish_time_ns < before) ++bad;
    ids.insert(b->info().publisher_id);
  }
  CHECK(bad == 0);
  CHECK(ids.size() == 2);  // one id per publisher
  CHECK_FALSE(ids.contains(0));
  CHECK(pub.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "a late subscriber's history samples keep their original metadata") {
  Signal published;
  Signal go;
  ValuePipe ends;  // each publish()'s end, as the publisher saw it
  Child pub([&] {
    ferry::Node node{"pub"};
    auto latched = node.publisher<Seq>("latched");
    std::uint64_t after = 0;
    for (std::uint64_t i = 0; i < 5; ++i) {
      latched.publish(stamped(1, i, after));  // nobody yet: the history keeps the last 3
      after = now_ns();
      ends.send(after);
    }
    published.raise();
    if (!go.wait()) return 1;
    return latched.publish(stamped(1, 5, after)).delivered == 1 ? 0 : 2;
  });
  REQUIRE(published.wait());
  std::uint64_t end[5] = {};
  for (auto& e : end) REQUIRE(ends.receive(e));
  std::this_thread::sleep_for(20ms);  // so a time taken at hand-over would differ
  const std::uint64_t joined = now_ns();
  ferry::Node node{"late"};
  auto sub = node.subscriber<Seq>("latched");
  std::uint64_t publisher_id = 0;
  for (std::uint64_t i = 2; i < 5; ++i) {
    auto s = sub.take(2s);
    REQUIRE(s);
    const auto& info = s->info();
    CHECK(info.sequence == i);
    CHECK(info.publish_time_ns >= (*s)->pad[0]);
    CHECK(info.publish_time_ns <= end[i]);
    CHECK(info.publish_time_ns < joined);
    if (i == 2) publisher_id = info.publisher_id;
    CHECK(info.publisher_id == publisher_id);
  }
  go.raise();
  auto live = sub.take(2s);
  REQUIRE(live);
  CHECK(live->info().sequence == 5);
  CHECK(live->info().publisher_id == publisher_id);
  CHECK(live->info().publish_time_ns >= joined);
  CHECK(pub.wait() == 0);
}
