// ferryd is not a single point of failure: when it is killed, established
// flows keep running; a restarted ferryd adopts the domain's live state, the
// nodes reconnect and re-register, every flow goes on in order with nothing
// lost or repeated, new ports match the old ones, and a node that died while
// no daemon ran is reclaimed by the next one.
#include <doctest/doctest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "skip.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: t, type: Seq, capacity: 64, policy: block, block_timeout_ms: 10000 }\n"
    "  - { name: blobs, type: bytes, max_size: 16KiB, capacity: 8, policy: drop_oldest }\n"
    "  - { name: to_child, type: Seq, capacity: 4, policy: block, block_timeout_ms: 4000 }\n"
    "  - { name: from_child, type: Seq, capacity: 4, policy: block, block_timeout_ms: 4000 }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 500 }\n"
    "pool:\n"
    "  - { chunk_size: 16KiB, count: 64 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

// A subscriber node `name` on topic t that checks samples 0 .. n-1, in
// order and intact, raising `progress` every 500; its exit code.
int take_in_order(const char* name, std::uint64_t n, Signal& progress) {
  ferry::Node node{name};
  auto subscriber = node.subscriber<Seq>("t");
  for (std::uint64_t i = 0; i < n; ++i) {
    auto s = subscriber.take(5s);
    if (!s) return 10;
    if ((*s)->seq != i || !intact(**s)) return 11;
    if (i % 500 == 0 && i > 0) progress.raise();
  }
  return 0;
}

// The domain's rings (or doorbells: what = "bell"), by their names in /dev/shm.
std::size_t ring_names(const std::string& domain, const std::string& what = "ring") {
  const std::string prefix = "ferry." + domain + "." + what + ".";
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    if (entry.path().filename().string().starts_with(prefix)) ++n;
  }
  return n;
}

// The publisher of take_in_order's samples on "t": once a subscriber is
// matched (it raises `go`), n samples of publisher 1, one every 300 us, each
// delivered (block: nothing may be lost on the way); then half a second for
// the subscribers to drain what is queued.
int publish_in_order(std::uint64_t n, Signal& go) {
  ferry::Node node{"pub"};
  auto publisher = node.publisher<Seq>("t");
  if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
  go.raise();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (publisher.publish(make_seq(1, i)).delivered < 1) return 2;
    std::this_thread::sleep_for(300us);
  }
  std::this_thread::sleep_for(500ms);
  return 0;
}

}  // namespace

TEST_CASE_FIXTURE(
    Served, "flows survive a ferryd crash and continue, in order, through the restarted daemon") {
  const std::uint64_t n = 8000;
  Signal go;
  Signal progress;
  Child pub([&] { return publish_in_order(n, go); });
  // The first subscriber checks every sample, start to end, in order.
  Child sub([&] { return take_in_order("sub", n, progress); });
  REQUIRE(go.wait());
  REQUIRE(progress.wait());  // 500 samples through the first ferryd
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    daemon.kill9();
    REQUIRE(progress.wait());  // 500 more with no daemon at all
    daemon.start();            // adopts the live state; the nodes reconnect
    REQUIRE(progress.wait());
    REQUIRE(progress.wait());
  }
  // A new subscriber matches the publisher that predates this ferryd.
  ferry::Node late_node{"late"};
  auto late = late_node.subscriber<Seq>("t");
  CHECK(eventually([&] { return late.publisher_count() == 1; }, 5s));
  auto first = late.take(5s);
  REQUIRE(first);
  std::uint64_t late_next = (*first)->seq + 1;
  std::uint64_t late_taken = 1;
  std::uint64_t late_broken = 0;
  while (late_next < n) {
    auto s = late.take(5s);
    if (!s) break;
    if ((*s)->seq != late_next) ++late_broken;
    late_next = (*s)->seq + 1;
    ++late_taken;
  }
  CHECK(late_next == n);
  CHECK(late_broken == 0);
  CHECK(late_taken > 100);
  CHECK(sub.wait() == 0);
  CHECK(pub.wait() == 0);
}

// Runs `body` as pid 1 of a new pid namespace (as `unshare --pid --fork`),
// sharing the runtime dir and /dev/shm; returns its exit code, 77 when
// this machine does not permit a new pid namespace.
template <typename Body>
int in_new_pid_namespace(Body body) {
  if (::unshare(CLONE_NEWPID) != 0) return 77;
  const pid_t inner = ::fork();
  if (inner < 0) return 78;
  if (inner == 0) ::_exit(body());
  int status = 0;
  ::waitpid(inner, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

TEST_CASE(
    "a subscriber in another pid namespace keeps its flow, in order, across a ferryd restart") {
  // After a restart the subscriber checks whether the publisher of each
  // queue the previous ferryd made is still alive. From another pid
  // namespace the publisher's pid means nothing: judged by it, the queue
  // was dropped while the publisher still filled it (samples lost).
  ServedConfig served(kConfig);
  const std::uint64_t n = 4000;
  Signal go;
  Signal progress;
  Child sub([&] {
    return in_new_pid_namespace([&] { return take_in_order("contained-sub", n, progress); });
  });
  Child pub([&] { return publish_in_order(n, go); });
  if (!go.wait()) {
    const int code = sub.wait(5s);
    if (code == 77) {
      ferry::test::skip_test("unshare(CLONE_NEWPID) is not permitted here");
      (void)pub.wait(5s);
      return;
    }
    FAIL("the publisher never matched the contained subscriber (its exit " << code << ")");
  }
  REQUIRE(progress.wait());
  served.daemon.kill9();
  REQUIRE(progress.wait());
  served.daemon.start();
  REQUIRE(progress.wait());
  CHECK(sub.wait() == 0);
  CHECK(pub.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "a node that dies while no ferryd runs is reclaimed by the next one") {
  Signal holding;
  Child doomed([&] {
    ferry::Node node{"doomed"};
    auto sub = node.subscriber<ferry::Bytes>("blobs");
    auto held = sub.take(10s);  // held, and more queued behind it
    if (!held) return 1;
    holding.raise();
    std::this_thread::sleep_for(60s);
    return 0;
  });
  ferry::Node node{"pub"};
  auto pub = node.publisher<ferry::Bytes>("blobs");
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  const std::vector<std::byte> blob(5000);
  CHECK(pub.publish(std::span(blob)).delivered == 1);
  REQUIRE(holding.wait());
  for (int i = 0; i < 3; ++i) CHECK(pub.publish(std::span(blob)).delivered == 1);

  daemon.kill9();
  doomed.kill(SIGKILL);
  CHECK(doomed.wait() == 128 + SIGKILL);
  daemon.start();
  // The publisher learns its old queue's reader is gone and drops it; the
  // new ferryd took back what the dead node held or had queued.
  CHECK(eventually([&] { return pub.subscriber_count() == 0; }, 5s));
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 5s); }));
  // And the domain works as before.
  ferry::Node other{"other"};
  auto sub = other.subscriber<ferry::Bytes>("blobs");
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.publish(std::span(blob)).delivered == 1);
  CHECK(sub.take(2s));
}

TEST_CASE_FIXTURE(Served,
                  "ports destroyed while no ferryd runs are unmatched: a block publisher no "
                  "longer waits for the gone reader, and their ring and doorbell names are "
                  "removed") {
  // The child's node lives on; only its ports go, while ferryd is down, so
  // no daemon ever sends the Unmatched for them.
  Signal ready;
  Signal drop_ports;
  Signal dropped;
  Signal finish;
  Child child([&] {
    ferry::Node node{"child"};
    {
      auto sub = node.subscriber<Seq>("to_child");
      auto pub = node.publisher<Seq>("from_child");
      if (!eventually([&] { return sub.publisher_count() == 1 && pub.subscriber_count() == 1; })) {
        return 1;
      }
      if (pub.publish(make_seq(2, 0)).delivered != 1) return 2;
      ready.raise();
      if (!drop_ports.wait()) return 3;
    }
    dropped.raise();
    return finish.wait(20s) ? 0 : 4;
  });
  ferry::Node node{"parent"};
  auto pub = node.publisher<Seq>("to_child");
  auto sub = node.subscriber<Seq>("from_child");
  REQUIRE(ready.wait());
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
  CHECK(ring_names(domain.name()) == 2);
  CHECK(ring_names(domain.name(), "bell") == 2);

  daemon.kill9();
  drop_ports.raise();
  REQUIRE(dropped.wait());
  daemon.start();

  // More samples than the gone reader's queue holds (capacity 4): none may
  // wait out block_timeout_ms (4 s) for a reader that is gone.
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < 12; ++i) CHECK(pub.publish(make_seq(1, i)).timed_out == 0);
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(eventually([&] { return pub.subscriber_count() == 0; }, 5s));
  // The child's publisher closed its ring: what it sent is still taken, then
  // the queue goes.
  auto first = sub.take(2s);
  REQUIRE(first);
  CHECK((*first)->seq == 0);
  CHECK(eventually(
      [&] {
        (void)sub.take();
        return sub.publisher_count() == 0;
      },
      5s));
  CHECK(eventually([&] { return ring_names(domain.name()) == 0; }, 5s));
  // The child's subscriber's doorbell too (the parent's stays).
  CHECK(ring_names(domain.name(), "bell") == 1);
  finish.raise();
  CHECK(child.wait() == 0);
}
