// A publisher's order across ferryd restarts: one publisher floods sequence
// numbers on a `block` and a `drop_oldest` topic (both with history) to two
// subscriber nodes while ferryd is killed -9 and started again, at random
// moments, also while the nodes are still re-registering with the previous
// restart. Each subscriber checks every sample: strictly increasing sequence
// numbers (no duplicate, no reordering) on both topics, and no gap on the
// `block` one. (After a restart each queue is replaced by a new one: a
// subscriber must drain the old queue before it reads the replacement, and
// the replacement must not get the history again.)
#include <doctest/doctest.h>
#include <signal.h>

#include <cstdio>
#include <random>
#include <thread>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "seed.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: o_block, type: Seq, capacity: 32, policy: block, block_timeout_ms: 20000, "
    "history: 4 }\n"
    "  - { name: o_old, type: Seq, capacity: 16, policy: drop_oldest, history: 4 }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 2000 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

constexpr std::uint64_t kEnd = 1;  // pad[0] of the last sample of a topic

// What a subscriber saw wrong; the exit code names the first kind.
enum Verdict : int {
  kFine = 0,
  kReordered = 10,  // a sequence number not above the previous one (repeated or late)
  kGap = 11,        // block: a sequence number skipped
  kTorn = 12,
  kSilent = 13,  // nothing for 10 s
  kNoNode = 14,
};

// One topic's check: the first sample may be any (history), every later one
// strictly above the previous, and on a block topic exactly one above.
struct OrderCheck {
  const char* topic;
  bool contiguous;
  std::uint64_t last = 0;
  bool started = false;
  bool ended = false;
  int verdict = kFine;

  void see(const Seq& s) {
    if (!intact(s)) fail(kTorn, s.seq);
    if (started && s.seq <= last) fail(kReordered, s.seq);
    if (started && contiguous && s.seq > last + 1) fail(kGap, s.seq);
    if (!started || s.seq > last) last = s.seq;
    started = true;
    if (s.pad[0] == kEnd) ended = true;
  }
  void fail(int kind, std::uint64_t seq) {
    if (verdict == kFine) {
      verdict = kind;
      std::fprintf(stderr, "subscriber on %s: sample %llu after %llu (%s)\n", topic,
                   static_cast<unsigned long long>(seq), static_cast<unsigned long long>(last),
                   kind == kReordered ? "repeated or out of order"
                   : kind == kGap     ? "a gap on a block topic"
                                      : "torn");
    }
  }
};

int check_order(const char* name, const Signal& ready) {
  try {
    ferry::Node node{name};
    auto block = node.subscriber<Seq>("o_block");
    auto old = node.subscriber<Seq>("o_old");
    if (!eventually([&] { return block.publisher_count() == 1 && old.publisher_count() == 1; },
                    10s)) {
      return kNoNode;
    }
    ready.raise();
    OrderCheck checks[2] = {{"o_block", true}, {"o_old", false}};
    ferry::WaitSet ws;
    ws.attach(block);
    ws.attach(old);
    auto quiet_since = std::chrono::steady_clock::now();
    while (!checks[0].ended || !checks[1].ended) {
      bool got = false;
      while (auto s = block.take()) {
        checks[0].see(**s);
        got = true;
      }
      while (auto s = old.take()) {
        checks[1].see(**s);
        got = true;
      }
      const auto now = std::chrono::steady_clock::now();
      if (got) quiet_since = now;
      if (now - quiet_since > 10s) return kSilent;
      if (!got) (void)ws.wait(50ms);
    }
    return checks[0].verdict != kFine ? checks[0].verdict : checks[1].verdict;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "subscriber %s: %s\n", name, e.what());
    return kNoNode;
  }
}

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "a publisher's samples stay in order, unrepeated and (block) gap-free while "
                  "ferryd is killed and restarted mid-flow") {
  const int rounds = static_cast<int>(scaled(10, 2));
  Signal ready_a;
  Signal ready_b;
  Signal stop;
  Signal started;
  Child pub([&] {
    ferry::Node node{"flood"};
    auto block = node.publisher<Seq>("o_block");
    auto old = node.publisher<Seq>("o_old");
    started.raise();
    std::uint64_t seq = 0;
    // Floods until told to stop; a short pause every few hundred samples
    // lets the subscribers' nodes and ferryd have the cores at times.
    for (;; ++seq) {
      (void)block.publish(make_seq(1, seq));
      (void)old.publish(make_seq(1, seq));
      if (seq % 256 == 255) {
        if (stop.wait(0ms)) break;
        std::this_thread::sleep_for(200us);
      }
    }
    ++seq;
    Seq last = make_seq(1, seq);
    last.pad[0] = kEnd;
    (void)old.publish(last);
    return block.publish(last).delivered == 2 ? 0 : 2;
  });
  REQUIRE(started.wait());
  Child sub_a([&] { return check_order("sub_a", ready_a); });
  Child sub_b([&] { return check_order("sub_b", ready_b); });
  REQUIRE(ready_a.wait());
  REQUIRE(ready_b.wait());

  std::mt19937 random(static_cast<std::mt19937::result_type>(ferry::test::test_seed()));
  std::uniform_int_distribution<int> down_ms(0, 100);
  std::uniform_int_distribution<int> up_ms(0, 600);  // under ~250: the nodes still re-register
  for (int round = 0; round < rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(up_ms(random)));
    daemon.kill9();
    std::this_thread::sleep_for(std::chrono::milliseconds(down_ms(random)));
    daemon.start();
  }
  std::this_thread::sleep_for(1s);  // the last restart's queues in use
  stop.raise();
  const int a = sub_a.wait(60s);
  const int b = sub_b.wait(60s);
  CHECK(a == kFine);
  CHECK(b == kFine);
  CHECK(pub.wait(30s) == 0);
}
