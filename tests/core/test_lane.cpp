// The hot path's shortcut (ferry/detail/lane.hpp) across processes: a port
// with one queue publishes and takes inline, and hands pool references on;
// when a sample is not one the shortcut carries, a queue is full, or the
// queues change, the general path takes over with nothing lost, duplicated
// or reordered, and back again.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <optional>
#include <thread>

#include "daemon_fixture.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: mix, type: Seq, capacity: 64, policy: block, block_timeout_ms: 5000, max_held: 4 "
    "}\n"
    "  - { name: busy, type: Seq, capacity: 256, policy: block, block_timeout_ms: 5000 }\n"
    "  - { name: blobs, type: bytes, max_size: 8KiB, capacity: 8, policy: block, "
    "block_timeout_ms: 5000 }\n"
    "  - { name: lossy, type: bytes, max_size: 8KiB, capacity: 4, policy: drop_new }\n",
    "pool:\n"
    "  - { chunk_size: 64B, count: 128 }\n"
    "  - { chunk_size: 8KiB, count: 24 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

}  // namespace

TEST_CASE_FIXTURE(
    Served,
    "one queue: copied and loaned samples of a small type arrive in order, every chunk back") {
  constexpr std::uint64_t kCount = 30000;
  Child pub([] {
    ferry::Node node{"mixer"};
    auto publisher = node.publisher<Seq>("mix");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    for (std::uint64_t i = 0; i < kCount; ++i) {
      ferry::PublishResult r;
      if (i % 3 == 0) {  // a loan: travels pooled, which the subscriber's shortcut hands on
        auto loan = publisher.loan();
        if (!loan) return 2;
        **loan = make_seq(1, i);
        r = publisher.publish(std::move(*loan));
      } else {
        r = publisher.publish(make_seq(1, i));
      }
      if (r.delivered != 1) return 3;
    }
    return 0;
  });
  ferry::Node node{"reader"};
  auto sub = node.subscriber<Seq>("mix");
  std::uint64_t next = 0;
  bool in_order = true;
  std::vector<ferry::Sample<Seq>> kept;  // holding some changes which buffer each take gets
  while (next < kCount) {
    auto s = sub.take(5s);
    if (!s) break;
    if ((*s)->seq != next || !intact(**s)) {
      in_order = false;
      break;
    }
    ++next;
    if (next % 7 == 0) kept.push_back(std::move(*s));
    if (kept.size() == 3) kept.clear();
  }
  kept.clear();
  CHECK(in_order);
  CHECK(next == kCount);
  CHECK(pub.wait() == 0);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

namespace {

// Sample i of the bytes tests: short ones travel inline (copied into the
// slot), long ones as pool references; every byte says which sample it is.
std::size_t blob_size(std::uint64_t i) { return i % 4 == 0 ? 100 + i % 50 : 300 + (i * 37) % 7800; }
std::byte blob_byte(std::uint64_t i, std::size_t k) {
  return static_cast<std::byte>((i * 7 + k) & 0xFF);
}

bool publish_blob(ferry::Publisher<ferry::Bytes>& pub, std::uint64_t i, ferry::PublishResult& r) {
  auto loan = pub.loan(blob_size(i));
  if (!loan) return false;
  std::byte* data = (*loan)->data();
  for (std::size_t k = 0; k < blob_size(i); ++k) data[k] = blob_byte(i, k);
  r = pub.publish(std::move(*loan));
  return true;
}

bool blob_intact(const ferry::Bytes& b, std::uint64_t i) {
  if (b.size() != blob_size(i)) return false;
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (b.data()[k] != blob_byte(i, k)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "one queue of a bytes topic: inline and pooled samples arrive in order, intact, "
                  "through full queues, every chunk back") {
  constexpr std::uint64_t kCount = 20000;
  Child pub([] {
    ferry::Node node{"blob_writer"};
    auto publisher = node.publisher<ferry::Bytes>("blobs");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    for (std::uint64_t i = 0; i < kCount; ++i) {
      ferry::PublishResult r;
      if (!publish_blob(publisher, i, r)) return 2;
      if (r.delivered != 1) return 3;  // block: a full queue waits, never drops
    }
    return 0;
  });
  ferry::Node node{"blob_reader"};
  auto sub = node.subscriber<ferry::Bytes>("blobs");
  std::uint64_t next = 0;
  bool intact = true;
  while (next < kCount) {
    auto s = sub.take(5s);
    if (!s) break;
    if (!blob_intact(**s, next)) {
      intact = false;
      break;
    }
    ++next;
    // Now and then the reader falls behind: the queue fills and the
    // publisher's pooled publishes find no room, wait, and go on.
    if (next % 1000 == 0) std::this_thread::sleep_for(2ms);
  }
  CHECK(intact);
  CHECK(next == kCount);
  CHECK(pub.wait() == 0);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served,
                  "drop_new on a bytes topic: pooled samples that find the queue full are "
                  "refused, the rest arrive, every chunk back") {
  constexpr std::uint64_t kCount = 64;
  Child pub([] {
    ferry::Node node{"lossy_writer"};
    auto publisher = node.publisher<ferry::Bytes>("lossy");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    std::uint32_t delivered = 0;
    for (std::uint64_t i = 0; i < kCount; ++i) {
      ferry::PublishResult r;
      if (!publish_blob(publisher, i, r)) return 2;
      if (r.delivered + r.dropped != 1) return 3;
      // Nobody takes: the first 4 (the capacity) fill the queue.
      if ((r.delivered == 1) != (i < 4)) return 4;
      delivered += r.delivered;
    }
    return delivered == 4 ? 0 : 5;
  });
  ferry::Node reader{"lossy_reader"};
  auto sub = reader.subscriber<ferry::Bytes>("lossy");
  CHECK(pub.wait() == 0);
  for (std::uint64_t i = 0; i < 4; ++i) {
    // With a timeout: the publisher saw the match, but our node's runtime
    // thread may not have attached the queue yet (under load it lags), and
    // take() without one does not wait for it.
    auto s = sub.take(5s);
    REQUIRE(s);
    CHECK(blob_intact(**s, i));
  }
  CHECK_FALSE(sub.take());
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

namespace {

constexpr int kVisits = 4;
constexpr std::uint64_t kVisitSamples = 1000;

// The steady publisher: its one queue becomes two while a visiting
// subscriber is there. It runs for `run_for` (past the visits) and marks its
// last sample (pad[0] = 1).
int steady_publisher(std::chrono::milliseconds run_for) {
  ferry::Node n{"steady"};
  auto publisher = n.publisher<Seq>("busy");
  if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
  const auto until = std::chrono::steady_clock::now() + run_for;
  std::uint64_t i = 0;
  for (; std::chrono::steady_clock::now() < until; ++i) {
    if (publisher.publish(make_seq(1, i)).delivered == 0) return 2;
  }
  Seq last = make_seq(1, i);
  last.pad[0] = 1;
  return publisher.publish(last).delivered == 0 ? 3 : 0;
}

// Visitors, one after another: a subscriber that reads for a while (the
// steady publisher goes general, then back), then a publisher that sends a
// short run (the reader's subscriber goes general, then back).
int visitors() {
  for (int v = 0; v < kVisits; ++v) {
    {
      ferry::Node n{"visiting_reader"};
      auto s = n.subscriber<Seq>("busy");
      // The steady publisher must now feed two queues: we see its samples,
      // consecutive from the first.
      std::uint64_t got = 0;
      std::uint64_t expect = 0;
      const auto until = std::chrono::steady_clock::now() + 50ms;
      while (std::chrono::steady_clock::now() < until || got == 0) {
        auto sample = s.take(2s);
        if (!sample) return 3;
        if ((*sample)->publisher != 1) continue;  // none other publishes now
        if (got > 0 && (*sample)->seq != expect) return 4;
        expect = (*sample)->seq + 1;
        ++got;
      }
    }
    {
      ferry::Node n{"visiting_writer"};
      auto p = n.publisher<Seq>("busy");
      if (!p.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
      for (std::uint64_t i = 0; i < kVisitSamples; ++i) {
        if (p.publish(make_seq(100 + v, i)).delivered == 0) return 2;
      }
    }
  }
  return 0;
}

// The reader: every sample of each publisher, in its order, until the
// steady one's last and every visitor's run. True when all came so.
bool read_all_in_order() {
  ferry::Node node{"reader"};
  auto sub = node.subscriber<Seq>("busy");
  std::map<std::uint64_t, std::uint64_t> next;  // publisher -> next seq expected
  // The steady publisher may start while only a visiting reader is there:
  // its samples must be consecutive from the first one we see.
  std::optional<std::uint64_t> steady_first;
  bool steady_done = false;
  auto visits_done = [&] {
    for (int v = 0; v < kVisits; ++v) {
      if (next[100 + v] != kVisitSamples) return false;
    }
    return true;
  };
  while (!steady_done || !visits_done()) {
    auto s = sub.take(5s);
    if (!s) break;
    const Seq& got = **s;
    if (got.publisher == 1 && !steady_first) {
      steady_first = got.seq;
      next[1] = got.seq;
    }
    if (!intact(got) || got.seq != next[got.publisher]) {
      MESSAGE("publisher " << got.publisher << ": seq " << got.seq << ", expected "
                           << next[got.publisher]);
      return false;
    }
    ++next[got.publisher];
    if (got.publisher == 1 && got.pad[0] == 1) steady_done = true;
  }
  CHECK(steady_done);
  CHECK(visits_done());
  CHECK(next[1] - steady_first.value_or(0) > 1000);
  return steady_done && visits_done();
}

}  // namespace

// Forks before the test process starts threads of its own (TSan allows that).
TEST_CASE_FIXTURE(
    Served, "ports leave the shortcut when peers come and go, and keep each publisher's order") {
  Child steady([] { return steady_publisher(1500ms); });
  Child visiting([] { return visitors(); });
  CHECK(read_all_in_order());
  CHECK(visiting.wait() == 0);
  CHECK(steady.wait() == 0);
}

// The same in one process, for the TSan suite: the serving threads hand the
// queues over to the users' threads while those publish and take.
TEST_CASE_FIXTURE(Served, "the shortcut is handed over between threads without a race") {
  std::atomic<int> steady_status{-1};
  std::atomic<int> visitors_status{-1};
  std::thread steady([&] { steady_status = steady_publisher(kSanitized ? 4000ms : 1500ms); });
  std::thread visiting([&] { visitors_status = visitors(); });
  CHECK(read_all_in_order());
  visiting.join();
  steady.join();
  CHECK(visitors_status == 0);
  CHECK(steady_status == 0);
}
