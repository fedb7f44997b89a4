// Multi-process ring tests: a ring in a Segment, opened by name in forked
// children (label "mp"). Children report through exit codes, never doctest.

#include <doctest/doctest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

#include "eventually.hpp"
#include "ferry/transport/doorbell.hpp"
#include "ferry/transport/handshake_fence.hpp"
#include "ferry/transport/names.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "ring_test_util.hpp"

using namespace ferry::transport;
using namespace ferry::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPayload = 56;  // 64-byte slots
constexpr std::uint32_t kStopFlag = 0xffffffff;

// Exit codes of the children.
constexpr int kOk = 0;
constexpr int kAttachFailed = 10;
constexpr int kPopFailed = 11;
constexpr int kWrongMessage = 12;
constexpr int kPushFailed = 13;
constexpr int kNotDegraded = 14;

// Progress and results shared with the children (a second segment).
struct Shared {
  std::atomic<std::uint64_t> last_taken{UINT64_MAX};  // consumer: last sequence number it took
  std::atomic<std::uint64_t> pushed{0};
  std::atomic<std::uint64_t> push_timeouts{0};
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> stalls{0};  // single pop calls longer than kStallNs (1 s)
  std::atomic<std::int64_t> max_wait_ns{0};
  std::atomic<std::uint32_t> go{0};
  // A flag set with no notify (a missed wake-up, made on purpose), how long
  // after it was set the waiter saw it, and the doorbell it waits on.
  std::atomic<std::uint32_t> quiet_flag{0};
  std::atomic<std::int64_t> quiet_set_ns{0};
  std::atomic<std::int64_t> quiet_seen_after_ns{-1};
  DoorbellWord quiet_bell{};
};

Segment create_shared(const TestDomain& domain) { return create_shared_segment<Shared>(domain); }
Shared& shared_of(Segment& seg) { return shared_in<Shared>(seg); }

// A child's view: the ring and the shared block, opened by name.
struct ChildView {
  explicit ChildView(const std::string& domain)
      : ring(open_ring_segment(domain, "ring")),
        shared_seg(*Segment::open(shm_name(domain, "shared"), SegmentKind::Test, 1, 5s)) {}
  Shared& shared() { return shared_of(shared_seg); }
  Segment ring;
  Segment shared_seg;
};

// Consumer child: takes messages `first`.. in order until `count` or a stop
// flag, publishing its progress in shared.last_taken.
int consume_in_order(const std::string& domain, std::uint64_t first, std::uint64_t count,
                     std::uint32_t spin) {
  ChildView v(domain);
  auto consumer = RingConsumer::attach(v.ring.payload(), v.ring.payload_size());
  if (!consumer) return kAttachFailed;
  consumer->set_spin_limit(spin);
  std::array<std::byte, kPayload> out{};
  for (std::uint64_t i = first; i < first + count; ++i) {
    std::uint32_t flags = 0;
    auto got = consumer->pop(out, &flags, 10s);
    if (!got) return kPopFailed;
    if (flags == kStopFlag) return kOk;
    if (*got != message_length(i, kPayload) || check_message({out.data(), *got}) != i)
      return kWrongMessage;
    // SYNC: release, pairs with the parent's acquire load (test bookkeeping).
    v.shared().last_taken.store(i, std::memory_order_release);
  }
  return kOk;
}

// A pop longer than this is a stall: a lost wake-up leaves a sleeping side
// asleep until its 2 s timeout. (Not 100 ms: this VM's host pauses both
// processes at once for ~100 ms now and then.)
constexpr std::int64_t kStallNs = 1'000'000'000;

// A consumer child that never spins: pops messages 0.. in order, each with
// a 2 s timeout, until the stop flag; counts its stalls and its longest
// pop in `shared`, and publishes its progress in shared.last_taken.
int consume_sleeping(RingConsumer& c, Shared& shared) {
  c.set_spin_limit(0);
  std::array<std::byte, kPayload> out{};
  for (std::uint64_t i = 0;; ++i) {
    const std::int64_t t0 = now_ns();
    std::uint32_t flags = 0;
    auto got = c.pop(out, &flags, 2s);
    const std::int64_t waited = now_ns() - t0;
    if (waited > kStallNs) shared.stalls.fetch_add(1);
    if (waited > shared.max_wait_ns.load()) shared.max_wait_ns.store(waited);
    if (!got) return kPopFailed;
    if (flags == kStopFlag) return kOk;
    if (check_message({out.data(), *got}) != i) return kWrongMessage;
    // SYNC: release, pairs with the parent's acquire load (test bookkeeping).
    shared.last_taken.store(i, std::memory_order_release);
  }
}

void run_ordered_across_processes(std::uint32_t capacity, std::uint64_t n) {
  TestDomain domain;
  auto ring = create_ring_segment(domain, "ring",
                                  {.capacity = capacity, .slot_size = 88, .mode = RingMode::Spsc});
  auto shared = create_shared(domain);
  const std::string name = domain.name();
  Child consumer([&] { return consume_in_order(name, 0, n, kDefaultSpinLimit); });
  auto producer = RingProducer::attach(ring.payload(), ring.payload_size());
  REQUIRE(producer.has_value());
  std::array<std::byte, kPayload> buf{};
  std::uint64_t push_errors = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!producer->push(make_message(i, message_length(i, kPayload), buf.data()), 0, 10s)) {
      ++push_errors;
      break;
    }
  }
  CHECK(consumer.wait(60s) == kOk);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(push_errors == 0);
  const RingStats s = read_ring_stats(ring.payload(), ring.payload_size());
  CHECK(s.pushed == n);
  CHECK(s.popped == n);
  CHECK(s.backlog == 0);
  MESSAGE("capacity " << capacity << ": " << n << " messages in " << seconds << " s ("
                      << static_cast<double>(n) / seconds / 1e6 << " M/s)");
}

}  // namespace

// Capacity 2 makes the ring full or empty at almost every message (each side
// waits for the other about every other message, ~10 us a round trip on two
// cores), so 500 k messages cross those edges as often as 2 M through 1024.
TEST_CASE("processes: 500 k messages arrive in order through a ring of capacity 2") {
  run_ordered_across_processes(2, scaled(500'000, 4));
}

TEST_CASE("processes: 2 M messages arrive in order through a ring of capacity 1024") {
  run_ordered_across_processes(1024, scaled(2'000'000, 4));
}

TEST_CASE("processes: producer and consumer that sleep as often as possible lose no wake-up") {
  // Capacity 1 and no spinning: after every push the producer finds the ring
  // full and sleeps, after every pop the consumer finds it empty and sleeps.
  // A lost wake-up leaves one side asleep until its 2 s timeout: a stall of
  // over 1 s. (Not 100 ms: this VM's host pauses both processes at once for
  // ~100 ms now and then, seen as push and pop each waiting 100.2 ms.)
  TestDomain domain;
  auto ring =
      create_ring_segment(domain, "ring", {.capacity = 1, .slot_size = 88, .mode = RingMode::Spsc});
  auto shared_seg = create_shared(domain);
  Shared& shared = shared_of(shared_seg);
  const std::string name = domain.name();
  const auto budget = std::chrono::milliseconds(static_cast<std::int64_t>(scaled(3'000, 2)));

  Child consumer([&] {
    ChildView v(name);
    auto c = RingConsumer::attach(v.ring.payload(), v.ring.payload_size());
    if (!c) return kAttachFailed;
    return consume_sleeping(*c, v.shared());
  });

  auto producer = RingProducer::attach(ring.payload(), ring.payload_size());
  REQUIRE(producer.has_value());
  producer->set_spin_limit(0);
  std::array<std::byte, kPayload> buf{};
  std::uint64_t stalls = 0;
  std::int64_t max_wait = 0;
  std::uint64_t rounds = 0;
  const auto end = std::chrono::steady_clock::now() + budget;
  for (; (rounds & 1023) != 0 || std::chrono::steady_clock::now() < end; ++rounds) {
    const std::int64_t t0 = now_ns();
    auto pushed = producer->push(make_message(rounds, 16, buf.data()), 0, 2s);
    const std::int64_t waited = now_ns() - t0;
    max_wait = std::max(max_wait, waited);
    if (waited > kStallNs) ++stalls;
    REQUIRE(pushed.has_value());
  }
  REQUIRE(producer->push(buf, kStopFlag, 2s).has_value());
  CHECK(consumer.wait(30s) == kOk);
  const auto& header = *reinterpret_cast<const ring_layout::RingHeader*>(ring.payload());
  const std::uint32_t consumer_wakes = header.data_bell.seq.load();
  const std::uint32_t producer_wakes = header.space_bell.seq.load();
  MESSAGE("handshake: " << std::string(light_notifier() ? "asymmetric (membarrier)" : "seq_cst"));
  MESSAGE(rounds << " rounds; woke the sleeping consumer " << consumer_wakes
                 << " times, the sleeping producer " << producer_wakes << " times; longest push "
                 << max_wait / 1000 << " us, longest pop " << shared.max_wait_ns.load() / 1000
                 << " us");
  CHECK(stalls == 0);
  CHECK(shared.stalls.load() == 0);
  CHECK(rounds >= scaled(20'000, 4));
  // Both sides really slept, thousands of times. Not a share of the rounds:
  // a waiter's membarrier(2) (the asymmetric handshake) lasts long enough
  // that the peer often made room before the waiter's last look, and the
  // producer, woken less often than the consumer, then does not sleep.
  CHECK(consumer_wakes > scaled(2'000, 4));
  CHECK(producer_wakes > scaled(2'000, 4));
}

TEST_CASE("processes: a light notifier stays light in a forked child") {
  // The handshake's light half is only correct in a process registered for
  // membarrier(2): a forked child must be registered too, or fence.
  if (!light_notifier()) {
    MESSAGE("this process fences with seq_cst (no membarrier here): nothing to check");
    return;
  }
  CHECK(waits_reach_light_notifiers());
  Child child([] { return light_notifier() && waits_reach_light_notifiers() ? kOk : kPopFailed; });
  CHECK(child.wait(10s) == kOk);
}

namespace {

// Makes every membarrier(2) of this process fail with EPERM from now on, as
// a container's seccomp profile may: what a waiter meets when its kernel
// offers membarrier but its own filter refuses it. False when the filter
// could not be installed.
bool refuse_membarrier() {
#if defined(__x86_64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  return false;  // no filter written for this architecture
#endif
#if defined(__x86_64__) || defined(__aarch64__)
  sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const sock_fprog fprog{static_cast<unsigned short>(std::size(program)), program};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0;
#endif
}

}  // namespace

TEST_CASE(
    "processes: a waiter whose membarrier(2) is refused sleeps in short steps and misses no "
    "sample") {
  // A light notifier (membarrier registered) pays no fence: only the
  // waiter's membarrier makes the handshake sound. A waiter refused it
  // cannot be sure a notify reached it, so it sleeps at most
  // kUnsureSleepBound at a time and looks again: a missed wake-up costs
  // that delay, never a sample. The producer waits for each message to be
  // taken before the next, so a consumer left asleep by a missed wake-up
  // would show as a stall of its whole pop timeout (2 s).
  if (!light_notifier()) {
    MESSAGE("this process fences with seq_cst (no membarrier here): nothing to check");
    return;
  }
  REQUIRE(waits_reach_light_notifiers());  // and the kernel offers it (asked before the fork)
  TestDomain domain;
  auto ring =
      create_ring_segment(domain, "ring", {.capacity = 4, .slot_size = 88, .mode = RingMode::Spsc});
  auto shared_seg = create_shared(domain);
  Shared& shared = shared_of(shared_seg);
  const std::string name = domain.name();
  const std::uint64_t rounds = scaled(3'000, 2);

  Child consumer([&] {
    ChildView v(name);
    auto c = RingConsumer::attach(v.ring.payload(), v.ring.payload_size());
    if (!c) return kAttachFailed;
    if (!refuse_membarrier() || waits_reach_light_notifiers()) return kNotDegraded;
    if (const int taken = consume_sleeping(*c, v.shared()); taken != kOk) return taken;
    // The wake-up missed for sure: the parent sets the flag and never
    // notifies. Sleeping in short steps, we see it within milliseconds
    // (a sure handshake would sleep the whole 2 s timeout here).
    Shared& sh = v.shared();
    const std::int64_t give_up = now_ns() + 10'000'000'000;
    // SYNC: acquire, pairs with the parent's release store (test bookkeeping).
    const auto flag_set = [&] { return sh.quiet_flag.load(std::memory_order_acquire) != 0; };
    while (!flag_set()) {
      if (now_ns() > give_up) return kPopFailed;
      (void)doorbell_wait(sh.quiet_bell, flag_set, 2s);
    }
    sh.quiet_seen_after_ns.store(now_ns() - sh.quiet_set_ns.load());
    return kOk;
  });

  auto producer = RingProducer::attach(ring.payload(), ring.payload_size());
  REQUIRE(producer.has_value());
  std::array<std::byte, kPayload> buf{};
  std::uint64_t unanswered = 0;
  for (std::uint64_t i = 0; i < rounds && unanswered == 0; ++i) {
    // A pause first, so that the consumer is asleep (or about to be) when
    // the message comes.
    std::this_thread::sleep_for(std::chrono::microseconds(20 + i % 7 * 30));
    REQUIRE(producer->push(make_message(i, 16, buf.data()), 0, 2s).has_value());
    const auto deadline = std::chrono::steady_clock::now() + 1s;
    // SYNC: acquire, pairs with the child's release store (test bookkeeping).
    while (shared.last_taken.load(std::memory_order_acquire) != i) {
      if (std::chrono::steady_clock::now() > deadline) {
        ++unanswered;
        break;
      }
      std::this_thread::sleep_for(50us);
    }
  }
  REQUIRE(producer->push(buf, kStopFlag, 2s).has_value());
  std::this_thread::sleep_for(50ms);  // the consumer is asleep on the quiet doorbell by now
  shared.quiet_set_ns.store(now_ns());
  // SYNC: release, pairs with the child's acquire load (test bookkeeping).
  shared.quiet_flag.store(1, std::memory_order_release);
  CHECK(consumer.wait(30s) == kOk);
  const auto& header = *reinterpret_cast<const ring_layout::RingHeader*>(ring.payload());
  const std::int64_t seen_after = shared.quiet_seen_after_ns.load();
  MESSAGE(rounds << " messages to a consumer refused membarrier; notifies woke it "
                 << header.data_bell.seq.load() << " times; longest pop "
                 << shared.max_wait_ns.load() / 1000
                 << " us; a flag set without a notify seen after " << seen_after / 1000 << " us");
  // Within its 1 ms steps, with room for this VM's pauses; a waiter that
  // trusted its handshake would have slept 2 s.
  CHECK(seen_after >= 0);
  CHECK(seen_after < 500'000'000);
  CHECK(unanswered == 0);
  CHECK(shared.stalls.load() == 0);
  CHECK(shared.last_taken.load() == rounds - 1);
}

namespace {

enum class KillWhen { Streaming, Sleeping };

void run_consumer_killed(KillWhen when) {
  TestDomain domain;
  auto ring = create_ring_segment(domain, "ring",
                                  {.capacity = 16, .slot_size = 88, .mode = RingMode::Spsc});
  auto shared_seg = create_shared(domain);
  Shared& shared = shared_of(shared_seg);
  const std::string name = domain.name();
  const std::uint64_t n = scaled(200'000, 4);
  const std::uint64_t pause_at =
      n / 4;  // Sleeping: the producer pauses here so the consumer falls asleep

  Child producer([&] {
    ChildView v(name);
    auto p = RingProducer::attach(v.ring.payload(), v.ring.payload_size());
    if (!p) return kAttachFailed;
    std::array<std::byte, kPayload> buf{};
    for (std::uint64_t i = 0; i < n; ++i) {
      if (when == KillWhen::Sleeping && i == pause_at) {
        while (v.shared().go.load(std::memory_order_acquire) == 0) std::this_thread::sleep_for(1ms);
      }
      const auto msg = make_message(i, message_length(i, kPayload), buf.data());
      // Short timeouts: while no consumer is attached the producer keeps
      // timing out and retrying, it never hangs.
      while (true) {
        auto r = p->push(msg, 0, 100ms);
        if (r) break;
        if (r.error() != RingError::Timeout) return kPushFailed;
        v.shared().push_timeouts.fetch_add(1);
      }
      v.shared().pushed.store(i + 1, std::memory_order_release);
    }
    return kOk;
  });

  std::uint32_t spin = when == KillWhen::Sleeping ? 0 : kDefaultSpinLimit;
  Child first_consumer([&] { return consume_in_order(name, 0, n, spin); });
  const auto& header = *reinterpret_cast<const ring_layout::RingHeader*>(ring.payload());
  const auto took = [&](std::uint64_t count) {
    return shared.last_taken.load(std::memory_order_acquire) + 1 >= count;
  };
  if (when == KillWhen::Streaming) {
    // Killed mid-stream: a third of the messages taken.
    REQUIRE(eventually([&] { return took(n / 3); }, 30s));
  } else {
    // Killed asleep: it took everything before the pause and sleeps in futex_wait.
    REQUIRE(
        eventually([&] { return took(pause_at) && header.data_bell.sleeping.load() == 1; }, 30s));
  }
  first_consumer.kill(SIGKILL);
  CHECK(first_consumer.wait(10s) == 128 + SIGKILL);
  if (when == KillWhen::Sleeping) {
    CHECK(header.data_bell.sleeping.load() == 1);  // stale: its owner is dead
    shared.go.store(1, std::memory_order_release);
  }
  // Nobody consumes for a while: the producer fills the ring and times out
  // (and keeps trying: it does not hang).
  REQUIRE(eventually([&] { return shared.push_timeouts.load() >= 2; }, 20s));

  const std::uint64_t last_taken = shared.last_taken.load(std::memory_order_acquire);
  const RingStats at_kill = read_ring_stats(ring.payload(), ring.payload_size());
  const std::uint64_t head = at_kill.head;  // initial index 0: message i sits at index i
  // The dead consumer recorded its progress after each pop, so it may have
  // taken one message more than it recorded (at most once), never less.
  CHECK(head >= last_taken + 1);
  CHECK(head <= last_taken + 2);
  CHECK(at_kill.backlog == 16);  // full, nothing lost from the ring

  auto consumer = RingConsumer::attach(ring.payload(), ring.payload_size());
  REQUIRE(consumer.has_value());
  CHECK(header.data_bell.sleeping.load() == 0);  // the stale flag is gone
  std::array<std::byte, kPayload> out{};
  std::uint64_t errors = 0;
  std::uint64_t received = 0;
  for (std::uint64_t i = head; i < n; ++i) {
    auto got = consumer->pop(out, nullptr, 10s);
    if (!got) {
      ++errors;
      break;
    }
    if (check_message({out.data(), *got}) != i)
      ++errors;  // continues at head, no duplicate, no gap
    ++received;
  }
  CHECK(errors == 0);
  CHECK(received == n - head);
  CHECK(producer.wait(30s) == kOk);
  CHECK(consumer->try_pop(out).error() == RingError::Empty);
  MESSAGE("killed after " << last_taken + 1 << " recorded, new consumer continued at " << head
                          << ", producer timed out " << shared.push_timeouts.load()
                          << " times meanwhile");
}

}  // namespace

TEST_CASE(
    "processes: a consumer killed with SIGKILL mid-stream is replaced and the sequence continues, "
    "nothing duplicated") {
  run_consumer_killed(KillWhen::Streaming);
}

TEST_CASE(
    "processes: a consumer killed asleep in futex_wait leaves a stale flag that the next consumer "
    "clears") {
  run_consumer_killed(KillWhen::Sleeping);
}

TEST_CASE("processes: a ring segment opened before its creator finished waits for the seal") {
  TestDomain domain;
  const std::string name = domain.name();
  const RingGeometry g{.capacity = 8, .slot_size = 88, .mode = RingMode::Spsc};
  auto seg = Segment::create(shm_name(name, "ring"), SegmentKind::Ring, kRingLayoutForTests,
                             ring_bytes(g));
  REQUIRE(seg.has_value());
  Child consumer([&] {
    // Opens while the parent still formats: must wait for seal(), then see a valid ring.
    auto opened =
        Segment::open(shm_name(name, "ring"), SegmentKind::Ring, kRingLayoutForTests, 10s);
    if (!opened) return kAttachFailed;
    auto c = RingConsumer::attach(opened->payload(), opened->payload_size());
    if (!c) return kAttachFailed;
    std::array<std::byte, kPayload> out{};
    auto got = c->pop(out, nullptr, 10s);
    if (!got || check_message({out.data(), *got}) != 7) return kWrongMessage;
    return kOk;
  });
  std::this_thread::sleep_for(50ms);
  REQUIRE(format_ring(seg->payload(), seg->payload_size(), g).has_value());
  seg->seal();
  auto producer = RingProducer::attach(seg->payload(), seg->payload_size());
  REQUIRE(producer.has_value());
  std::array<std::byte, kPayload> buf{};
  REQUIRE(producer->try_push(make_message(7, 20, buf.data())).has_value());
  CHECK(consumer.wait(20s) == kOk);
}
