// A restarted ferryd continues port and node ids from the domain's shared
// registry (issue 34, hostile input 8). That word is shared memory anyone
// who can open the registry may scribble on: 0 or 2^64-1 there must not
// make the new ferryd reuse ids of queues that still exist, nor wrap; it
// recovers ids past every object of the domain and says so.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/discovery/heartbeats.hpp"
#include "ferry/transport/segment.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: t, type: Seq, capacity: 64, policy: block, block_timeout_ms: 2000 }\n"
    "  - { name: u, type: Seq, capacity: 64, policy: block, block_timeout_ms: 2000 }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 1000 }\n");

// Writes `next_id` into the registry's header, as a rogue peer could.
void scribble_next_id(const TestDomain& domain, std::uint64_t next_id) {
  auto registry = ferry::transport::Segment::open(
      ferry::discovery::registry_object_name(domain.name()), ferry::discovery::kRegistryKind,
      ferry::discovery::kRegistryLayoutVersion, 0ms, ferry::transport::SegmentAccess::ReadWrite);
  REQUIRE(registry.has_value());
  const auto table =
      ferry::discovery::HeartbeatTable::in(registry->payload(), registry->payload_size());
  REQUIRE(table);
  // SYNC: relaxed; no ferryd runs now, and the next one reads it at start.
  table.header().next_id.store(next_id, std::memory_order_relaxed);
}

bool delivered(ferry::Publisher<Seq>& pub, ferry::Subscriber<Seq>& sub, std::uint64_t seq) {
  if (pub.publish(make_seq(1, seq)).delivered == 0) return false;
  auto s = sub.take(2s);
  return s && (*s)->seq == seq && intact(**s);
}

}  // namespace

TEST_CASE(
    "a restarted ferryd finding next_id scribbled to 0 or 2^64-1 recovers fresh ids: a live "
    "subscriber keeps its doorbell and is woken by a new publisher") {
  for (const std::uint64_t scribbled :
       {std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max()}) {
    CAPTURE(scribbled);
    ServedConfig served(kConfig);
    ferry::Node a{"a"};
    ferry::Node b{"b"};
    // Ports come and go before the live ones: the ids of the live ports
    // (and so the names of their doorbells and queues) are well past the
    // first few.
    for (int i = 0; i < 12; ++i) (void)a.subscriber<Seq>("u");
    auto sub = a.subscriber<Seq>("t");
    auto pub = b.publisher<Seq>("t");
    REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
    REQUIRE(delivered(pub, sub, 0));

    served.daemon.kill9();
    scribble_next_id(served.domain, scribbled);
    served.daemon.start();
    // New ports after the restart: each gets an id of its own, so none of
    // their doorbells replaces the live subscriber's (which it keeps).
    ferry::Node c{"c"};
    std::vector<ferry::Subscriber<Seq>> others;
    for (int i = 0; i < 16; ++i) {
      CAPTURE(i);
      REQUIRE_NOTHROW(others.push_back(c.subscriber<Seq>("u")));
    }
    // A new publisher rings the live subscriber's doorbell: a take() that
    // sleeps is woken at once, not at its timeout.
    auto late_pub = c.publisher<Seq>("t");
    REQUIRE(late_pub.wait_for_subscribers(1, 5s));
    std::thread later([&] {
      std::this_thread::sleep_for(200ms);
      (void)late_pub.publish(make_seq(2, 0));
    });
    const auto started = std::chrono::steady_clock::now();
    auto s = sub.take(3s);
    const auto took = std::chrono::steady_clock::now() - started;
    later.join();
    REQUIRE(s);
    CHECK((*s)->publisher == 2);
    MESSAGE("the sleeping take() returned after "
            << std::chrono::duration<double, std::milli>(took).count() << " ms");
    CHECK(took < 1500ms);
    // The old flow goes on.
    CHECK(delivered(pub, sub, 1));
    CHECK(served.daemon.stop() == 0);
  }
}
