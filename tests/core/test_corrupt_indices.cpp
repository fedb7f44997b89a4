// Impossible queue indices (issue 34, hostile input 4): one 4-byte write of
// a rogue peer puts a ring's tail (or, on an overwriting ring, its head)
// more than a capacity away from the other index. The subscriber must not
// read that as "ready": it counts the queue as corrupt once, treats it as
// broken from then on, and its take(timeout) and WaitSet::wait() sleep.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include "daemon_fixture.hpp"
#include "ferry/transport/ring.hpp"
#include "pubsub_util.hpp"
#include "queue_probe.hpp"

using namespace std::chrono_literals;

namespace {

const std::string kConfig = seq_config(
    "  - { name: fresh, type: Seq, capacity: 16, policy: drop_new }\n"
    "  - { name: oldest, type: Seq, capacity: 16, policy: drop_oldest }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 2000 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

double thread_cpu_seconds() {
  rusage r{};
  ::getrusage(RUSAGE_THREAD, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

enum class Scribble { Tail, Head };

// One queue between a publisher and a subscriber of `topic`, two samples
// through it, then the rogue write; the subscriber's waits must sleep.
void check_sleeps_after_scribble(const ferry::test::TestDomain& domain, const char* topic,
                                 Scribble what) {
  ferry::Node node{"victim"};
  auto [pub, sub] = matched_ports<Seq>(node, topic);
  for (std::uint64_t i = 0; i < 2; ++i) REQUIRE(pub.publish(make_seq(1, i)).delivered == 1);
  for (std::uint64_t i = 0; i < 2; ++i) {
    auto s = sub.take(1s);
    REQUIRE(s);
    CHECK((*s)->seq == i);
  }
  auto rings = ferry::test::open_queue_rings(domain.name());
  REQUIRE(rings.size() == 1);
  auto& header = ferry::test::ring_header(rings[0]);
  // SYNC: relaxed loads and stores: a rogue peer's writes, ordered by nothing.
  const std::uint32_t head = header.consumer.head.load(std::memory_order_relaxed);
  const std::uint32_t tail = header.producer.tail.load(std::memory_order_relaxed);
  REQUIRE(head == tail);
  if (what == Scribble::Tail) {
    header.producer.tail.store(head + 1000, std::memory_order_relaxed);
  } else {
    header.consumer.head.store(tail - 1000, std::memory_order_relaxed);
  }
  // take(timeout) sleeps for its timeout: no sample, hardly any CPU.
  const double cpu_before = thread_cpu_seconds();
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 2; ++i) CHECK_FALSE(sub.take(300ms));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double cpu = thread_cpu_seconds() - cpu_before;
  MESSAGE("two take(300 ms) on the corrupt queue: " << wall << " s, " << cpu << " s of CPU");
  CHECK(wall >= 0.55);
  CHECK(cpu < 0.25 * wall);
  // Counted, once.
  const auto stats = ferry::transport::read_ring_stats(rings[0].payload(), rings[0].payload_size());
  CHECK(stats.corrupt == 1);
  // A WaitSet sleeps over it too.
  ferry::WaitSet ws;
  ws.attach(sub);
  (void)ws.wait(0ms);  // what was news before the scribble
  const auto wait_started = std::chrono::steady_clock::now();
  CHECK(ws.wait(300ms).empty());
  CHECK(std::chrono::steady_clock::now() - wait_started >= 250ms);
  // Broken for good: whatever the indices say later, nothing is read from it.
  (void)pub.publish(make_seq(1, 2));
  CHECK_FALSE(sub.take(100ms));
  const auto after = ferry::transport::read_ring_stats(rings[0].payload(), rings[0].payload_size());
  CHECK(after.corrupt == 1);
  CHECK(after.popped == stats.popped);
}

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "an impossible tail on a drop_new queue: take(timeout) sleeps, the queue is "
                  "counted corrupt and treated as broken") {
  check_sleeps_after_scribble(domain, "fresh", Scribble::Tail);
}

TEST_CASE_FIXTURE(Served,
                  "an impossible tail on a drop_oldest queue: take(timeout) sleeps, the queue is "
                  "counted corrupt and treated as broken") {
  check_sleeps_after_scribble(domain, "oldest", Scribble::Tail);
}

TEST_CASE_FIXTURE(Served,
                  "an impossible head on a drop_oldest queue: take(timeout) sleeps, the queue is "
                  "counted corrupt and treated as broken") {
  check_sleeps_after_scribble(domain, "oldest", Scribble::Head);
}
