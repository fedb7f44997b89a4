// Zero-copy samples through the domain's pool: loans, large types, bytes
// topics, the limits (max_loans, max_held, pool exhaustion), and every chunk
// back in the pool afterwards.
#include <doctest/doctest.h>
#include <signal.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "daemon_fixture.hpp"
#include "frame.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: frames, type: Frame, capacity: 4, policy: drop_oldest }\n"
    "  - { name: seq, type: Seq, capacity: 8, policy: drop_new, max_loans: 2, max_held: 2 }\n"
    "  - { name: log, type: bytes, max_size: 64KiB, capacity: 16, policy: block }\n",
    // Continues the `types:` map seq_config opened, then the pool.
    kFrameType +
        "pool:\n"
        "  - { chunk_size: 4MiB, count: 6 }\n"
        "  - { chunk_size: 64KiB, count: 32 }\n"
        "  - { chunk_size: 64B, count: 16 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

std::uint64_t checksum(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; i += 4096) h = (h ^ p[i]) * 1099511628211ULL;
  return h ^ p[n - 1];
}

// Whether `p` lies in this process's mapping of the domain's pool object.
bool in_pool_mapping(const void* p, const std::string& domain) {
  std::ifstream maps("/proc/self/maps");
  const std::string pool = "/dev/shm/ferry." + domain + ".pool";
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    if (line.find(pool) == std::string::npos) continue;
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream(line) >> std::hex >> lo >> dash >> hi;
    if (addr >= lo && addr < hi) return true;
  }
  return false;
}

}  // namespace

TEST_CASE_FIXTURE(
    Served,
    "a loaned frame is read in place: the sample lies in the pool and holds the bytes written") {
  {
    ferry::Node node{"camera"};
    auto [pub, sub] = matched_ports<Frame>(node, "frames");
    auto loan = pub.loan();
    REQUIRE(loan);
    (*loan)->width = 1920;
    (*loan)->height = 1080;
    for (std::size_t i = 0; i < sizeof(Frame::pixels); i += 4096)
      (*loan)->pixels[i] = static_cast<std::uint8_t>(i / 4096);
    (*loan)->pixels[sizeof(Frame::pixels) - 1] = 0xAB;
    const void* written = loan->get();
    const std::uint64_t sum = checksum((*loan)->pixels, sizeof(Frame::pixels));
    CHECK(pub.publish(std::move(*loan)).delivered == 1);
    auto s = sub.take(1s);
    REQUIRE(s);
    CHECK(static_cast<const void*>(s->get()) == written);  // same chunk, same mapping: no copy
    CHECK(in_pool_mapping(s->get(), domain.name()));
    CHECK((*s)->width == 1920);
    CHECK(checksum((*s)->pixels, sizeof(Frame::pixels)) == sum);
  }
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served,
                  "a loan that fits a slot is written into a buffer of the publisher's own and "
                  "arrives as a copy in the slot: no pool chunk, the buffer reused") {
  Child reader([] {
    ferry::Node node{"reader"};
    auto sub = node.subscriber<Seq>("seq");
    for (std::uint64_t i = 0; i < 6; ++i) {
      auto s = sub.take(5s);
      if (!s) return 1;
      if (!intact(**s) || (*s)->seq != i) return 2;
    }
    return 0;
  });
  ferry::Node node{"writer"};
  auto pub = node.publisher<Seq>("seq");
  REQUIRE(pub.wait_for_subscribers(1, 10s));
  const void* first_chunk = nullptr;
  for (std::uint64_t i = 0; i < 6; ++i) {
    auto loan = pub.loan();  // max_loans 2: a buffer still held would refuse the third
    REQUIRE(loan);
    if (i == 0) first_chunk = loan->get();
    CHECK(static_cast<const void*>(loan->get()) == first_chunk);  // our own, still in our cache
    CHECK_FALSE(in_pool_mapping(loan->get(), domain.name()));
    const auto loaned = ferry::test::pool_count(domain.name());
    CHECK(loaned.total == loaned.free);
    **loan = make_seq(1, i);
    CHECK(pub.publish(std::move(*loan)).delivered == 1);
    const auto count = ferry::test::pool_count(domain.name());
    CHECK(count.total == count.free);  // the sample is in the reader's slot, not in a chunk
  }
  CHECK(reader.wait(10s) == 0);
}

TEST_CASE_FIXTURE(Served, "frames cross processes through the pool, and every chunk comes back") {
  constexpr int kFrames = 60;
  Child sub([] {
    ferry::Node node{"viewer"};
    auto subscriber = node.subscriber<Frame>("frames");
    std::uint32_t last = 0;
    int taken = 0;
    while (true) {
      auto s = subscriber.take(3s);
      if (!s) return 1;  // drop_oldest may skip frames, but the last one always comes
      if ((*s)->pixels[sizeof(Frame::pixels) - 1] != static_cast<std::uint8_t>((*s)->height))
        return 2;
      if ((*s)->height < last) return 3;  // drop_oldest may skip frames, never reorder
      last = (*s)->height;
      ++taken;
      if (last == kFrames - 1) return 0;
    }
  });
  Child pub([] {
    ferry::Node node{"camera"};
    auto publisher = node.publisher<Frame>("frames");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      auto loan = publisher.loan();
      if (!loan) return 2;
      (*loan)->width = 1920;
      (*loan)->height = i;
      (*loan)->pixels[sizeof(Frame::pixels) - 1] = static_cast<std::uint8_t>(i);
      if (publisher.publish(std::move(*loan)).delivered != 1) return 3;
      std::this_thread::sleep_for(1ms);
    }
    return 0;
  });
  CHECK(pub.wait() == 0);
  CHECK(sub.wait() == 0);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served, "publishing a large sample by copy goes through one shared chunk") {
  {
    ferry::Node node{"n"};
    auto pub = node.publisher<Frame>("frames");
    auto sub1 = node.subscriber<Frame>("frames");
    auto sub2 = node.subscriber<Frame>("frames");
    REQUIRE(pub.wait_for_subscribers(2, std::chrono::seconds(10)));
    auto frame = std::make_unique<Frame>();
    frame->width = 640;
    frame->pixels[12345] = 7;
    CHECK(pub.publish(*frame).delivered == 2);
    auto a = sub1.take(1s);
    auto b = sub2.take(1s);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->get() == b->get());  // both read the one chunk
    CHECK((*a)->pixels[12345] == 7);
    CHECK(ferry::test::pool_count(domain.name()).free ==
          ferry::test::pool_count(domain.name()).total - 1);
  }
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served, "drop_oldest releases a discarded frame's chunk at once") {
  {
    ferry::Node node{"n"};
    auto pub = node.publisher<Frame>("frames");
    auto sub = node.subscriber<Frame>("frames");  // never takes
    REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
    std::uint32_t overwritten = 0;
    for (int i = 0; i < 20; ++i) {
      auto loan = pub.loan();
      REQUIRE(loan);  // 6 chunks of 4 MiB suffice only because discarded ones come back
      overwritten += pub.publish(std::move(*loan)).overwritten;
    }
    CHECK(overwritten == 16);
    const auto count = ferry::test::pool_count(domain.name());
    CHECK(count.total - count.free == 4);  // exactly the queue's four frames
  }
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served,
                  "an empty or foreign loan is refused with InvalidArgument and sends nothing") {
  {
    ferry::Node node{"n"};
    auto pub = node.publisher<Frame>("frames");
    auto other = node.publisher<Frame>("frames");
    auto sub = node.subscriber<Frame>("frames");
    REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
    auto loan = pub.loan();
    REQUIRE(loan);
    auto moved = std::move(*loan);
    const ferry::PublishResult empty = pub.publish(std::move(*loan));  // moved-from
    CHECK(empty.error == ferry::ErrorCode::InvalidArgument);
    CHECK(empty.delivered == 0);
    const ferry::PublishResult foreign = other.publish(std::move(moved));
    CHECK(foreign.error == ferry::ErrorCode::InvalidArgument);
    CHECK(foreign.delivered == 0);
    CHECK_FALSE(sub.take().has_value());
  }
  // The foreign loan's chunk went back to its publisher's pool.
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(Served,
                  "max_loans, an exhausted pool and max_held are error values that recover") {
  {
    ferry::Node node{"n"};
    auto [pub, sub] = matched_ports<Seq>(node, "seq");
    auto l1 = pub.loan();
    auto l2 = pub.loan();
    REQUIRE(l1);
    REQUIRE(l2);
    auto l3 = pub.loan();
    REQUIRE_FALSE(l3);
    CHECK(l3.error() == ferry::ErrorCode::TooManyLoans);
    **l1 = make_seq(0, 0);
    CHECK(pub.publish(std::move(*l1)).delivered == 1);
    CHECK(pub.loan());  // a place came back (the temporary loan is returned at once)

    auto frames = node.publisher<Frame>("frames");
    std::vector<ferry::Loan<Frame>> held;
    // max_loans 4 (the default) and 6 chunks: the limit comes first.
    while (auto l = frames.loan()) held.push_back(std::move(*l));
    CHECK(held.size() == 4);
    auto bytes_pub = node.publisher<ferry::Bytes>("log");
    std::vector<ferry::Loan<ferry::Bytes>> big;
    while (auto l = bytes_pub.loan(60000)) big.push_back(std::move(*l));
    CHECK(big.size() == 4);  // max_loans again; exhaustion is tested below
    held.clear();
    big.clear();

    // max_held: two samples held, the third take says why it returns nothing.
    for (std::uint64_t i = 1; i <= 3; ++i) pub.publish(make_seq(0, i));
    auto s0 = sub.take();
    auto s1 = sub.take();
    REQUIRE(s0);
    REQUIRE(s1);
    auto s2 = sub.try_take();
    REQUIRE_FALSE(s2);
    CHECK(s2.error() == ferry::ErrorCode::TooManyHeld);
    s0.reset();
    CHECK(sub.take());
    // max_held reached with nothing queued: empty, not an error.
    s1.reset();
    while (sub.take()) {
    }
    pub.publish(make_seq(0, 10));
    pub.publish(make_seq(0, 11));
    auto h0 = sub.take();
    auto h1 = sub.take();
    REQUIRE(h0);
    REQUIRE(h1);
    auto none = sub.try_take();
    REQUIRE(none);
    CHECK_FALSE(*none);
  }
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE("a pool with no chunk left makes loan() return PoolExhausted until one comes back") {
  ServedConfig served(seq_config("  - { name: log, type: bytes, max_size: 1KiB, max_loans: 100 }\n",
                                 "pool:\n  - { chunk_size: 1KiB, count: 3 }\n"));
  ferry::Node node{"n"};
  auto pub = node.publisher<ferry::Bytes>("log");
  // 300 bytes: more than a bytes topic's slot holds, so each is a chunk.
  std::vector<ferry::Loan<ferry::Bytes>> loans;
  for (int i = 0; i < 3; ++i) {
    auto l = pub.loan(300);
    REQUIRE(l);
    loans.push_back(std::move(*l));
  }
  auto none = pub.loan(300);
  REQUIRE_FALSE(none);
  CHECK(none.error() == ferry::ErrorCode::PoolExhausted);
  auto too_big = pub.loan(2000);
  REQUIRE_FALSE(too_big);
  CHECK(too_big.error() == ferry::ErrorCode::TooLarge);
  // A loan that fits a slot needs no chunk (the publisher's own buffers).
  for (int i = 0; i < 4; ++i) {
    auto small = pub.loan(100);
    REQUIRE(small);
    loans.push_back(std::move(*small));
  }
  // All four buffers out: the next small loan would need a chunk.
  auto fifth = pub.loan(100);
  REQUIRE_FALSE(fifth);
  CHECK(fifth.error() == ferry::ErrorCode::PoolExhausted);
  loans.pop_back();  // a buffer back
  CHECK(pub.loan(100));
  loans.erase(loans.begin());  // a chunk back
  CHECK(pub.loan(300));
}

TEST_CASE_FIXTURE(Served,
                  "bytes topics carry random sizes up to max_size across processes, intact") {
  constexpr int kMessages = 2000;
  Child sub([] {
    ferry::Node node{"reader"};
    auto subscriber = node.subscriber<ferry::Bytes>("log");
    std::mt19937 rng(42);
    for (int i = 0; i < kMessages; ++i) {
      auto s = subscriber.take(3s);
      if (!s) return 1;
      const std::size_t expected = rng() % (64 * 1024 + 1);
      if ((*s)->size() != expected) return 2;
      for (std::size_t k = 0; k < expected; k += 97) {
        if ((*s)->data()[k] != static_cast<std::byte>((k + static_cast<std::size_t>(i)) & 0xFF))
          return 3;
      }
    }
    return 0;
  });
  Child pub([] {
    ferry::Node node{"writer"};
    auto publisher = node.publisher<ferry::Bytes>("log");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    std::mt19937 rng(42);
    for (int i = 0; i < kMessages; ++i) {
      const std::size_t size = rng() % (64 * 1024 + 1);
      auto loan = publisher.loan(size);
      if (!loan) return 2;
      for (std::size_t k = 0; k < size; k += 97) {
        (*loan)->data()[k] = static_cast<std::byte>((k + static_cast<std::size_t>(i)) & 0xFF);
      }
      if (publisher.publish(std::move(*loan)).delivered != 1) return 3;
    }
    return 0;
  });
  CHECK(pub.wait() == 0);
  CHECK(sub.wait() == 0);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE("a block publisher that times out keeps no chunk") {
  ServedConfig served(
      seq_config("  - { name: log, type: bytes, max_size: 1KiB, capacity: 2, "
                 "policy: block, block_timeout_ms: 50 }\n"));
  {
    ferry::Node node{"n"};
    auto pub = node.publisher<ferry::Bytes>("log");
    auto sub = node.subscriber<ferry::Bytes>("log");  // never takes
    REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
    // Larger than a bytes topic's slot: these travel as pool references
    // (a sample that fits the slot is copied into it, and holds no chunk).
    const std::byte payload[300]{};
    CHECK(pub.publish(std::span(payload)).delivered == 1);
    CHECK(pub.publish(std::span(payload)).delivered == 1);
    const auto r = pub.publish(std::span(payload));
    CHECK(r.timed_out == 1);
    const auto count = ferry::test::pool_count(served.domain.name());
    CHECK(count.total - count.free == 2);  // the two queued, not the timed-out one
  }
  CHECK(ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE_FIXTURE(
    Served,
    "a subscriber port destroyed with samples queued gives their chunks back, its node alive") {
  Signal queued;
  Child sub([&] {
    ferry::Node node{"reader"};
    {
      auto subscriber = node.subscriber<ferry::Bytes>("log");
      if (!queued.wait()) return 1;  // three samples queued up, never taken
    }
    std::this_thread::sleep_for(60s);  // the node lives on
    return 0;
  });
  ferry::Node node{"writer"};
  auto pub = node.publisher<ferry::Bytes>("log");
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  const std::vector<std::byte> payload(2000);
  for (int i = 0; i < 3; ++i) CHECK(pub.publish(std::span(payload)).delivered == 1);
  CHECK(ferry::test::pool_count(domain.name()).free + 3 ==
        ferry::test::pool_count(domain.name()).total);
  queued.raise();
  REQUIRE(eventually([&] { return pub.subscriber_count() == 0; }));
  // The publisher empties the abandoned queue when it next looks at its queues.
  CHECK(pub.publish(std::span(payload)).delivered == 0);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 2s); }));
  sub.kill(SIGKILL);
}

TEST_CASE_FIXTURE(Served,
                  "a subscriber killed while holding and queueing frames gives every chunk back") {
  Signal holding;
  Child sub([&] {
    ferry::Node node{"doomed"};
    auto subscriber = node.subscriber<Frame>("frames");
    auto held = subscriber.take(5s);  // hold one, let the others queue
    if (!held) return 1;
    holding.raise();
    std::this_thread::sleep_for(60s);
    return 0;
  });
  {
    ferry::Node node{"camera"};
    auto pub = node.publisher<Frame>("frames");
    REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
    for (int i = 0; i < 3; ++i) {
      auto loan = pub.loan();
      REQUIRE(loan);
      pub.publish(std::move(*loan));
    }
    REQUIRE(holding.wait());
    const auto in_use = ferry::test::pool_count(domain.name());
    CHECK(in_use.total - in_use.free == 3);  // one held, two queued
    sub.kill(SIGKILL);
    CHECK(sub.wait() == 128 + SIGKILL);
    CHECK(eventually([&] { return pub.subscriber_count() == 0; }));
  }
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE(
    "a pooled topic takes reader nodes up to max_subscribers, and an observer beside them: every "
    "one gets every loaned sample") {
  // A chunk's own metadata counts 13 holders, the publisher's node being
  // one; the other readers' holders go to overflow nodes chained from it
  // (docs/design/pool.md). ferryd used to refuse a 14th reader node here.
  ServedConfig served(kConfig);
  std::vector<std::unique_ptr<ferry::Node>> nodes;
  std::vector<ferry::Subscriber<ferry::Bytes>> readers;
  for (int i = 0; i < 15; ++i) {
    nodes.push_back(std::make_unique<ferry::Node>("reader-" + std::to_string(i)));
    readers.push_back(nodes.back()->subscriber<ferry::Bytes>("log"));
  }
  // Another port of a node that reads already: 16, the topic's max_subscribers.
  readers.push_back(nodes.front()->subscriber<ferry::Bytes>("log"));
  ferry::Node extra{"observer"};
  readers.push_back(
      extra.subscriber<ferry::Bytes>("log", ferry::SubscriberOptions{.observer = true}));
  // max_subscribers still holds.
  CHECK_THROWS_WITH_AS((void)extra.subscriber<ferry::Bytes>("log"),
                       doctest::Contains("max_subscribers is 16"), ferry::Error);
  ferry::Node writer{"writer"};
  auto pub = writer.publisher<ferry::Bytes>("log");
  REQUIRE(pub.wait_for_subscribers(16, 5s));
  REQUIRE(eventually([&] { return pub.observer_count() == 1; }, 5s));
  for (int k = 0; k < 3; ++k) {
    auto loan = pub.loan(10000);
    REQUIRE(loan);
    std::memset((*loan)->data(), 7 + k, 10000);
    const auto result = pub.publish(std::move(*loan));
    CHECK(result.delivered == 16);  // observers are not counted in the result
    CHECK(result.dropped == 0);
    for (auto& r : readers) {
      auto s = r.take(2s);
      REQUIRE(s);
      CHECK((*s)->size() == 10000);
      CHECK(static_cast<int>((*s)->data()[9999]) == 7 + k);
    }
  }
  CHECK(ferry::test::pool_stats(served.domain.name()).holder_overflow == 0);
}
