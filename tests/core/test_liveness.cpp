// Heartbeats: a node that stops beating (SIGSTOP) is declared dead after
// timeout_ms; ferryd takes back everything it held, releases a publisher
// blocked on it and tells its peers; when it wakes up its ports say
// NodeDeclaredDead and a new port joins the domain again.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/discovery/client.hpp"
#include "node_list.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "queue_probe.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: frames, type: bytes, max_size: 16KiB, capacity: 4, policy: block, "
    "block_timeout_ms: 20000 }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 400 }\n"
    "pool:\n"
    "  - { chunk_size: 16KiB, count: 32 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

// Sends `frame` to the one subscriber, which holds it (and raises
// `holding`), then four more that fill its queue (capacity 4).
void fill_behind_held(ferry::Publisher<ferry::Bytes>& pub, std::span<const std::byte> frame,
                      Signal& holding) {
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.publish(frame).delivered == 1);
  REQUIRE(holding.wait());
  for (int i = 0; i < 4; ++i) CHECK(pub.publish(frame).delivered == 1);
}

enum : int { kOk = 0, kNoSample = 1, kNotDead = 2, kNoReason = 3, kNoRejoin = 4, kBadRejoin = 5 };

}  // namespace

TEST_CASE_FIXTURE(Served, "live nodes beat: ferryd reports heartbeat ages well below timeout_ms") {
  ferry::Node node{"beating"};
  auto sub = node.subscriber<ferry::Bytes>("frames");
  std::this_thread::sleep_for(300ms);
  bool seen = false;
  for (const auto& n : list_nodes(domain)) {
    if (n.name != "beating") continue;
    seen = true;
    CHECK(n.heartbeat_age_ms < 200);
  }
  CHECK(seen);
  CHECK(node.declared_dead().empty());
}

TEST_CASE_FIXTURE(
    Served,
    "a stopped subscriber is declared dead: chunks back, blocked publisher released, rejoin on "
    "wake") {
  Signal holding;
  Signal resumed;
  Child sleepy([&] {
    ferry::Node node{"sleepy"};
    auto sub = node.subscriber<ferry::Bytes>("frames");
    auto held = sub.take(10s);  // held while we are stopped
    if (!held) return int{kNoSample};
    holding.raise();
    if (!resumed.wait(30s)) return int{kNotDead};
    auto r = sub.try_take();
    if (r || r.error() != ferry::ErrorCode::NodeDeclaredDead) return int{kNotDead};
    if (node.declared_dead().find("declared dead") == std::string::npos) return int{kNoReason};
    auto again = node.subscriber<ferry::Bytes>("frames");  // joins the domain again
    auto s = again.take(10s);
    if (!s) return int{kNoRejoin};
    return (*s)->size() == 777 ? int{kOk} : int{kBadRejoin};
  });

  ferry::Node node{"camera"};
  auto pub = node.publisher<ferry::Bytes>("frames");
  const std::vector<std::byte> frame(5000);
  fill_behind_held(pub, std::span(frame), holding);
  CHECK(ferry::test::pool_count(domain.name()).free + 5 ==
        ferry::test::pool_count(domain.name()).total);

  ::kill(sleepy.pid(), SIGSTOP);
  const auto stopped = std::chrono::steady_clock::now();
  // Blocks on the full queue (block_timeout_ms is 20 s) until ferryd
  // declares the subscriber dead and tells us.
  const auto r = pub.publish(std::span(frame));
  const auto waited = std::chrono::steady_clock::now() - stopped;
  CHECK(r.delivered == 0);
  CHECK(r.timed_out == 0);
  CHECK(waited >= 300ms);
  CHECK(waited < 5s);
  CHECK(pub.subscriber_count() == 0);
  // Everything it held or had queued is back, though the process exists.
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 3s); }));
  for (const auto& n : list_nodes(domain)) CHECK(n.name != "sleepy");

  ::kill(sleepy.pid(), SIGCONT);
  resumed.raise();
  CHECK(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  const std::vector<std::byte> small(777);
  CHECK(pub.publish(std::span(small)).delivered == 1);
  CHECK(sleepy.wait(15s) == kOk);
}

TEST_CASE_FIXTURE(
    Served,
    "a stopped publisher is declared dead; woken up, publish and loan say NodeDeclaredDead") {
  Signal ready;
  Signal resumed;
  Child stuck([&] {
    ferry::Node node{"stuck"};
    auto pub = node.publisher<ferry::Bytes>("frames");
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    ready.raise();
    if (!resumed.wait(30s)) return 2;
    const std::vector<std::byte> frame(5000);
    const auto r = pub.publish(std::span(frame));
    if (r.delivered != 0 || r.error != ferry::ErrorCode::NodeDeclaredDead) return 3;
    auto loan = pub.loan(100);
    if (loan || loan.error() != ferry::ErrorCode::NodeDeclaredDead) return 4;
    return node.declared_dead().empty() ? 5 : 0;
  });
  ferry::Node node{"viewer"};
  auto sub = node.subscriber<ferry::Bytes>("frames");
  REQUIRE(ready.wait());
  // Our side sees the publisher too before it stops: else the count below
  // is 0 before any death and the test would not wait for one.
  REQUIRE(eventually([&] { return sub.publisher_count() == 1; }));
  ::kill(stuck.pid(), SIGSTOP);
  CHECK(eventually([&] { return sub.publisher_count() == 0; }, 5s));
  ::kill(stuck.pid(), SIGCONT);
  resumed.raise();
  CHECK(stuck.wait() == 0);
  CHECK_FALSE(sub.take(50ms));
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 3s); }));
}

TEST_CASE_FIXTURE(
    Served,
    "kill -9 of a subscriber releases a block publisher waiting on it within 1 s; the pool is "
    "whole") {
  Signal holding;
  Child doomed([&] {
    ferry::Node node{"doomed"};
    auto sub = node.subscriber<ferry::Bytes>("frames");
    auto held = sub.take(10s);
    if (!held) return 1;
    holding.raise();
    std::this_thread::sleep_for(60s);
    return 0;
  });
  ferry::Node node{"camera"};
  auto pub = node.publisher<ferry::Bytes>("frames");
  const std::vector<std::byte> frame(5000);
  fill_behind_held(pub, std::span(frame), holding);
  auto rings = ferry::test::open_queue_rings(domain.name());
  REQUIRE(rings.size() == 1);
  const auto& space_bell = ferry::test::ring_header(rings[0]).space_bell;
  std::atomic<bool> killed_in_time{false};
  std::chrono::steady_clock::time_point killed_at;
  std::thread killer([&] {
    // Killed once the publish below sleeps on the full queue's space doorbell.
    killed_in_time = eventually([&] { return space_bell.sleeping.load() != 0; });
    killed_at = std::chrono::steady_clock::now();
    doomed.kill(SIGKILL);
  });
  const auto r = pub.publish(std::span(frame));  // block_timeout_ms is 20 s
  const auto released_at = std::chrono::steady_clock::now();
  killer.join();
  CHECK(killed_in_time);
  CHECK(r.delivered == 0);
  CHECK(released_at - killed_at < 1s);
  MESSAGE("publisher released "
          << std::chrono::duration_cast<std::chrono::milliseconds>(released_at - killed_at).count()
          << " ms after the kill");
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 2s); }));
}

TEST_CASE_FIXTURE(Served, "kill -9 of a publisher holding loans returns them to the pool") {
  Signal loaned;
  Child doomed([&] {
    ferry::Node node{"doomed"};
    auto pub = node.publisher<ferry::Bytes>("frames");
    auto a = pub.loan(10000);
    auto b = pub.loan(10000);
    if (!a || !b) return 1;
    loaned.raise();
    std::this_thread::sleep_for(60s);
    return 0;
  });
  REQUIRE(loaned.wait());
  const auto count = ferry::test::pool_count(domain.name());
  CHECK(count.total - count.free == 2);
  doomed.kill(SIGKILL);
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 2s); }));
}
