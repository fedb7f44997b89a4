// Every subscriber gets every sample (issue 34): a loaned sample reaches any
// number of reader nodes up to the topic's max_subscribers, small or large,
// on a block topic with nothing dropped; and killing a reader or the
// publisher of such a fan-out leaves the pool whole. Real ferryd, real
// processes (a chunk held by more than 13 nodes lives in a chain of holder
// nodes: docs/design/pool.md).
#include <doctest/doctest.h>
#include <signal.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "frame.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "shared_object.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

// A Seq with a page behind it: too large for a ring slot (4 KiB), so each
// sample travels as a reference to a pool chunk that every reader holds
// (a loan that fits a slot is copied into the slots instead: docs/loans.md).
struct SeqPage {
  Seq seq;
  std::uint8_t page[4096];
};
FERRY_TYPE(SeqPage);

namespace {

enum : int { kOk = 0, kTimeout = 10, kLost = 11, kOrder = 12, kTorn = 13, kFailed = 14 };

// Shared by the test and its children (an anonymous shared mapping).
struct Board {
  std::atomic<std::uint32_t> ready{0};  // reader nodes subscribed
  std::atomic<std::uint64_t> taken{0};  // samples taken, all readers
  std::atomic<std::uint32_t> stop{0};   // readers exit
  std::atomic<std::uint64_t> published{0};
};

// A reader process with `nodes` reader nodes on `topic`, each taking
// `expect` samples of one publisher, in order and intact.
int seq_readers(Board& board, const std::string& topic, int process, int nodes,
                std::uint64_t expect) {
  try {
    std::vector<std::unique_ptr<ferry::Node>> owners;
    std::vector<ferry::Subscriber<SeqPage>> subs;
    for (int k = 0; k < nodes; ++k) {
      owners.push_back(std::make_unique<ferry::Node>("reader-" + std::to_string(process) + "-" +
                                                     std::to_string(k)));
      subs.push_back(owners.back()->subscriber<SeqPage>(topic));
    }
    board.ready.fetch_add(static_cast<std::uint32_t>(nodes));
    std::vector<std::uint64_t> next(static_cast<std::size_t>(nodes), 0);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    for (bool all = false; !all;) {
      all = true;
      for (int k = 0; k < nodes; ++k) {
        auto& n = next[static_cast<std::size_t>(k)];
        if (n == expect) continue;
        all = false;
        // One reader node at a time waits a little; the others are polled.
        auto s = subs[static_cast<std::size_t>(k)].take(nodes == 1 ? 100ms : 1ms);
        if (!s) continue;
        const Seq& got = (*s)->seq;
        if (!intact(got)) return kTorn;
        if (got.seq != n) {
          std::fprintf(stderr, "reader %d-%d: sample %llu where %llu was due\n", process, k,
                       static_cast<unsigned long long>(got.seq),
                       static_cast<unsigned long long>(n));
          return got.seq > n ? kLost : kOrder;
        }
        ++n;
        board.taken.fetch_add(1, std::memory_order_relaxed);
      }
      if (std::chrono::steady_clock::now() > deadline) {
        for (int k = 0; k < nodes; ++k) {
          std::fprintf(stderr, "reader %d-%d: %llu of %llu samples\n", process, k,
                       static_cast<unsigned long long>(next[static_cast<std::size_t>(k)]),
                       static_cast<unsigned long long>(expect));
        }
        return kTimeout;
      }
    }
    return kOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reader %d: %s\n", process, e.what());
    return kFailed;
  }
}

// Publishes `count` loaned SeqPage samples on `topic` to `readers` reader
// nodes; the summed results.
ferry::PublishResult publish_loans(const std::string& topic, std::uint32_t readers,
                                   std::uint64_t count) {
  ferry::Node node{"fan-publisher"};
  auto pub = node.publisher<SeqPage>(topic);
  REQUIRE(pub.wait_for_subscribers(readers, 30s));
  ferry::PublishResult total;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto loan = pub.loan();
    while (!loan) {  // the pool's chunks are all out: they come back as readers release
      REQUIRE(loan.error() == ferry::ErrorCode::PoolExhausted);
      std::this_thread::sleep_for(100us);
      loan = pub.loan();
    }
    (*loan)->seq = make_seq(1, i);
    const ferry::PublishResult r = pub.publish(std::move(*loan));
    total.delivered += r.delivered;
    total.dropped += r.dropped;
    total.overwritten += r.overwritten;
    total.timed_out += r.timed_out;
  }
  return total;
}

const std::string kSeqConfig = seq_config(
    "  - { name: fan16, type: SeqPage, capacity: 16, policy: block, block_timeout_ms: 10000 }\n"
    "  - { name: fan64, type: SeqPage, capacity: 8, policy: block, block_timeout_ms: 10000,\n"
    "      max_subscribers: 64 }\n",
    // Continues the `types:` map seq_config opened.
    "  SeqPage:\n"
    "    fields:\n"
    "      - { name: seq, type: Seq }\n"
    "      - { name: page, type: \"u8[4096]\" }\n"
    "liveness: { heartbeat_ms: 100, timeout_ms: 5000 }\n");

// `processes` reader processes of `nodes_each` reader nodes each on
// `topic`, fed n loaned samples once all subscribed (within `ready_within`):
// none dropped or timed out, every sample delivered to and taken by every
// node, the pool all free after. Returns the pool's statistics then.
ferry::transport::PoolStats fan_out_loans(const ServedConfig& served, const std::string& topic,
                                          int processes, int nodes_each, std::uint64_t n,
                                          std::chrono::seconds ready_within) {
  SharedObject<Board> board;
  const auto readers_total = static_cast<std::uint32_t>(processes * nodes_each);
  std::vector<Child> readers;
  for (int p = 0; p < processes; ++p) {
    readers.emplace_back([&board, &topic, p, nodes_each, n] {
      return seq_readers(*board, topic, p, nodes_each, n);
    });
  }
  REQUIRE(eventually([&] { return board->ready.load() == readers_total; }, ready_within));
  const ferry::PublishResult r = publish_loans(topic, readers_total, n);
  CHECK(r.dropped == 0);
  CHECK(r.timed_out == 0);
  CHECK(r.delivered == n * readers_total);
  for (auto& c : readers) CHECK(c.wait(120s) == kOk);
  CHECK(board->taken.load() == n * readers_total);
  CHECK(ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f); }));
  return ferry::test::pool_stats(served.domain.name());
}

}  // namespace

TEST_CASE(
    "16 subscriber processes of a block topic fed by loans each get every sample, and the "
    "publisher drops none") {
  // Before chains of holder nodes, readers 14 to 16 lost every loaned sample
  // and the publisher counted them dropped.
  ServedConfig served(kSeqConfig);
  const auto stats = fan_out_loans(served, "fan16", 16, 1, scaled(2000, 4), 30s);
  CHECK(stats.holder_overflow == 0);
  CHECK(stats.holder_nodes_linked > 0);
}

TEST_CASE("64 reader nodes of a loaned topic (max_subscribers 64) each get every sample") {
  ServedConfig served(kSeqConfig);
  // 16 processes of 4 nodes.
  CHECK(fan_out_loans(served, "fan64", 16, 4, scaled(200, 4), 60s).holder_overflow == 0);
}

namespace {

const std::string kFrameConfig = seq_config(
    "  - { name: camera, type: Frame, capacity: 4, policy: block, block_timeout_ms: 10000 }\n",
    kFrameType +
        "liveness: { heartbeat_ms: 100, timeout_ms: 5000 }\n"
        "pool:\n"
        "  - { chunk_size: 4MiB, count: 24 }\n");

// A frame's content, from its number: a few bytes per page.
std::uint8_t frame_byte(std::uint32_t frame, std::size_t i) {
  return static_cast<std::uint8_t>((frame * 131 + i / 4096 * 7) & 0xff);
}

int frame_reader(Board& board, int index, std::uint32_t expect) {
  try {
    ferry::Node node{"viewer-" + std::to_string(index)};
    auto sub = node.subscriber<Frame>("camera");
    board.ready.fetch_add(1);
    for (std::uint32_t f = 0; f < expect;) {
      auto s = sub.take(20s);
      if (!s) {
        std::fprintf(stderr, "viewer %d: frame %u did not come\n", index, f);
        return kTimeout;
      }
      const Frame& frame = **s;
      if (frame.width != f) return frame.width > f ? kLost : kOrder;
      if (frame.height != 1080) return kTorn;
      for (std::size_t i = 0; i < sizeof frame.pixels; i += 4096) {
        if (frame.pixels[i] != frame_byte(f, i)) return kTorn;
      }
      ++f;
      board.taken.fetch_add(1, std::memory_order_relaxed);
    }
    return kOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "viewer %d: %s\n", index, e.what());
    return kFailed;
  }
}

}  // namespace

TEST_CASE("16 subscribers of loaned 1080p frames at 30 Hz each get every frame") {
  // Before chains of holder nodes, ferryd refused the 14th viewer of a
  // pooled topic although max_subscribers is 16.
  ServedConfig served(kFrameConfig);
  SharedObject<Board> board;
  constexpr int kViewers = 16;
  const std::uint32_t frames = static_cast<std::uint32_t>(scaled(60, 2));  // 2 s at 30 Hz
  std::vector<Child> viewers;
  for (int v = 0; v < kViewers; ++v)
    viewers.emplace_back([&board, v, frames] { return frame_reader(*board, v, frames); });
  REQUIRE(eventually([&] { return board->ready.load() == kViewers; }, 30s));
  ferry::Node camera{"camera"};
  auto pub = camera.publisher<Frame>("camera");
  REQUIRE(pub.wait_for_subscribers(kViewers, 30s));
  ferry::PublishResult total;
  auto next = std::chrono::steady_clock::now();
  for (std::uint32_t f = 0; f < frames; ++f) {
    auto loan = pub.loan();
    while (!loan) {
      REQUIRE(loan.error() == ferry::ErrorCode::PoolExhausted);
      std::this_thread::sleep_for(1ms);
      loan = pub.loan();
    }
    Frame& frame = **loan;
    frame.width = f;
    frame.height = 1080;
    for (std::size_t i = 0; i < sizeof frame.pixels; i += 4096) frame.pixels[i] = frame_byte(f, i);
    const ferry::PublishResult r = pub.publish(std::move(*loan));
    total.delivered += r.delivered;
    total.dropped += r.dropped;
    total.timed_out += r.timed_out;
    next += 33333us;
    std::this_thread::sleep_until(next);
  }
  CHECK(total.dropped == 0);
  CHECK(total.timed_out == 0);
  CHECK(total.delivered == std::uint64_t{frames} * kViewers);
  for (auto& v : viewers) CHECK(v.wait(60s) == kOk);
  CHECK(board->taken.load() == std::uint64_t{frames} * kViewers);
  CHECK(ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f); }));
}

namespace {

const std::string kKillConfig = seq_config(
    "  - { name: blobs, type: bytes, max_size: 4KiB, capacity: 8, policy: drop_oldest,\n"
    "      max_subscribers: 24 }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 3000 }\n"
    "pool:\n"
    "  - { chunk_size: 4KiB, count: 256 }\n");

// Takes every sample, holding up to three for a while, until killed or stopped.
int blob_reader(Board& board, int index) {
  try {
    ferry::Node node{"blob-reader-" + std::to_string(index)};
    auto sub = node.subscriber<ferry::Bytes>("blobs");
    board.ready.fetch_add(1);
    std::vector<ferry::Sample<ferry::Bytes>> held;
    std::mt19937 rng(static_cast<unsigned>(index));
    while (board.stop.load() == 0) {
      auto s = sub.take(10ms);
      if (!s) continue;
      board.taken.fetch_add(1, std::memory_order_relaxed);
      held.push_back(std::move(*s));
      while (held.size() > rng() % 4)
        held.erase(held.begin() + static_cast<long>(rng() % held.size()));
    }
    return kOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blob reader %d: %s\n", index, e.what());
    return kFailed;
  }
}

// Publishes loans until killed.
int blob_publisher(Board& board) {
  try {
    ferry::Node node{"blob-publisher"};
    auto pub = node.publisher<ferry::Bytes>("blobs");
    while (true) {
      if (auto loan = pub.loan(3000)) {
        std::memset((*loan)->data(), 0x5a, 3000);
        pub.publish(std::move(*loan));
        board.published.fetch_add(1, std::memory_order_relaxed);
      } else {
        std::this_thread::sleep_for(100us);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blob publisher: %s\n", e.what());
    return kFailed;
  }
}

}  // namespace

TEST_CASE(
    "kill -9 of readers and of the publisher of a topic with 20 readers, at random moments, "
    "leaves the pool whole") {
  ServedConfig served(kKillConfig);
  SharedObject<Board> board;
  constexpr int kReaders = 20;
  std::vector<std::optional<Child>> readers(kReaders);
  for (int i = 0; i < kReaders; ++i)
    readers[static_cast<std::size_t>(i)].emplace([&board, i] { return blob_reader(*board, i); });
  REQUIRE(eventually([&] { return board->ready.load() == kReaders; }, 30s));
  std::mt19937_64 rng(34);
  const int rounds = static_cast<int>(scaled(6, 2));
  int next_reader = kReaders;
  for (int round = 0; round < rounds; ++round) {
    Child publisher([&board] { return blob_publisher(*board); });
    const std::uint64_t from = board->published.load();
    REQUIRE(eventually([&] { return board->published.load() > from + 200; }, 30s));
    // Two readers die mid-stream (most chunks they hold are in overflow
    // nodes: 20 readers), new ones take their place.
    for (int k = 0; k < 2; ++k) {
      const auto victim = static_cast<std::size_t>(rng() % kReaders);
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
      readers[victim]->kill(SIGKILL);
      CHECK(readers[victim]->wait(5s) == 128 + SIGKILL);
      const int index = next_reader++;
      readers[victim].emplace([&board, index] { return blob_reader(*board, index); });
    }
    const std::uint64_t later = board->published.load();
    REQUIRE(eventually([&] { return board->published.load() > later + 200; }, 30s));
    // Then the publisher dies mid-publish.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    publisher.kill(SIGKILL);
    CHECK(publisher.wait(5s) == 128 + SIGKILL);
  }
  board->stop.store(1);
  for (auto& r : readers) CHECK(r->wait(30s) == kOk);
  CHECK(
      ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f, 10s); }));
  const auto stats = ferry::test::pool_stats(served.domain.name());
  CHECK(stats.holder_nodes_linked > 0);
  CHECK(stats.corrupt == 0);
  MESSAGE(board->published.load() << " samples published, " << board->taken.load() << " taken; "
                                  << stats.holder_nodes_linked << " overflow nodes linked");
}
