// In a steady topology no ferry thread allocates: a publisher node and a
// subscriber node, each in a process of its own with only its user thread
// and its node's runtime thread, stream samples for seconds while every
// operator new (and malloc, outside sanitizer builds) of the process is
// counted. The runtime thread polls its socket and beats every 5 ms here
// (heartbeat_ms: 10), so a per-poll allocation shows up hundreds of times.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

#include "alloc_counter.hpp"
#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace ferry::test;

namespace {

// What each side found, in memory shared with the test process.
struct Outcome {
  std::atomic<std::uint64_t> publisher_allocations{~0ull};
  std::atomic<std::uint64_t> subscriber_allocations{~0ull};
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> out_of_order{0};
};

constexpr std::uint64_t kSamples = 30'000;  // at ~10 kHz: 3 s
constexpr std::uint64_t kWarmup = 1'000;    // not counted: first matches, lanes, pool
constexpr std::uint64_t kCooldown = 1'000;  // not counted: the end of the stream

int publisher_side(Outcome& out) {
  ferry::Node node{"steady-pub"};
  auto pub = node.publisher<Seq>("t");
  if (!pub.wait_for_subscribers(1, std::chrono::seconds(10))) return 2;
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    if (i == kWarmup) ferry::test::start_counting_process();
    if (i == kSamples - kCooldown) out.publisher_allocations = ferry::test::stop_counting_process();
    if (pub.publish(make_seq(1, i)).delivered != 1) return 3;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  // Stay until the subscriber has everything (the queue would go with us).
  return eventually([&] { return out.received.load() == kSamples; }) ? 0 : 4;
}

int subscriber_side(Outcome& out) {
  ferry::Node node{"steady-sub"};
  auto sub = node.subscriber<Seq>("t");
  std::uint64_t expected = 0;
  while (expected < kSamples) {
    // take(timeout): the subscriber sleeps on its doorbell between samples.
    auto s = sub.take(std::chrono::seconds(5));
    if (!s) return 2;
    const std::uint64_t seq = (*s)->seq;
    if (seq != expected || !intact(**s)) out.out_of_order.fetch_add(1);
    expected = seq + 1;
    if (seq == kWarmup) ferry::test::start_counting_process();
    if (seq == kSamples - kCooldown)
      out.subscriber_allocations = ferry::test::stop_counting_process();
    out.received.fetch_add(1);
  }
  return 0;
}

}  // namespace

TEST_CASE("a steady stream between two nodes allocates nothing in either node's threads") {
  ServedConfig served(seq_config("  - { name: t, type: Seq, capacity: 64, policy: block }\n",
                                 "liveness: { heartbeat_ms: 10, timeout_ms: 2000 }\n"));
  void* shared =
      ::mmap(nullptr, sizeof(Outcome), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  auto* out = new (shared) Outcome{};

  // Forked before either node exists: each child has only its own threads.
  Child subscriber([&] { return subscriber_side(*out); });
  Child publisher([&] { return publisher_side(*out); });
  CHECK(publisher.wait(std::chrono::seconds(60)) == 0);
  CHECK(subscriber.wait(std::chrono::seconds(60)) == 0);

  CHECK(out->received.load() == kSamples);
  CHECK(out->out_of_order.load() == 0);
  CHECK(out->publisher_allocations.load() == 0);
  CHECK(out->subscriber_allocations.load() == 0);
  out->~Outcome();
  ::munmap(shared, sizeof(Outcome));
}
