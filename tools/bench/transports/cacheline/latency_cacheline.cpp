// The floor of a cross-core hand-off: two processes passing one cache line
// back and forth, nothing else. The line holds one 32-bit word; the pinger
// stores an odd value (2 seq + 1), the echo side waits for it and stores the
// next even one, the pinger waits for that. A round trip is two transfers
// of the line between the cores' caches (the store's read-for-ownership
// after the peer wrote it, and the peer's load missing), so the reported
// one-way latency (round trip / 2) is one hand-off: what any shared-memory
// transport pays at least once per message. With --wait sleep each store is
// followed by a futex wake and each wait sleeps in the futex: the floor of a
// sleeping hand-off. See docs/benchmarks.md.
#include <fmt/format.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <stdexcept>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/spin.hpp"
#include "ferry/transport/cache_demote.hpp"
#include "ferry/transport/doorbell.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"

namespace ferry::bench {

namespace {

// The shared line: the word and nothing else on it.
struct alignas(64) Line {
  std::atomic<std::uint32_t> word{0};
};
static_assert(sizeof(Line) == 64);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

// Odd: the ping side's; even: the echo side's. Rounds stay far below 2^31
// (--rounds <= 1e8), so 2 seq + 1 never reaches it.
constexpr std::uint32_t kStop = 0xffff'ffffu;

[[nodiscard]] std::uint32_t ping_value(std::uint64_t seq) noexcept {
  return static_cast<std::uint32_t>(2 * seq + 1);
}

// Stores `value` and, when the peer may sleep, wakes it.
void put(Line& line, std::uint32_t value, Wait wait) noexcept {
  // SYNC: release, pairs with the acquire load in await() on the other
  // side: nothing else travels, but the peer must see the value, not a
  // half-ordered store (and the pairing keeps the hand-off honest).
  line.word.store(value, std::memory_order_release);
  // As ferry's rings publish a message that stands alone: the store drained
  // (a fence), then the line moved to the shared cache, where the peer's
  // load finds it sooner than in our core's (CLDEMOTE; a NOP without it).
  // SYNC: pairs with nothing (as Flush::Now): it only drains the store now.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  transport::cache_demote(&line.word);
  if (wait == Wait::Sleep) (void)transport::futex_wake(line.word, 1);
}

// Waits until the word equals `want` (or kStop when `stop_ok`); returns the
// value seen, or 0 after kPeerTimeoutNs.
std::uint32_t await(Line& line, std::uint32_t want, Wait wait, bool stop_ok) noexcept {
  std::uint32_t seen = 0;
  auto arrived = [&] {
    // SYNC: acquire, pairs with the release store in put() on the other side.
    seen = line.word.load(std::memory_order_acquire);
    return seen == want || (stop_ok && seen == kStop);
  };
  if (wait == Wait::Spin) return spin_until(arrived, kPeerTimeoutNs) ? seen : 0;
  const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
  while (!arrived()) {
    const std::int64_t left = deadline - now_ns();
    if (left <= 0) return 0;
    (void)transport::futex_wait(line.word, seen, std::chrono::nanoseconds(left));
  }
  return seen;
}

class CachelineLatency final : public LatencyTransport {
 public:
  CachelineLatency() {
    void* p =
        ::mmap(nullptr, sizeof(Line), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cacheline: cannot map the shared line");
    line_ = new (p) Line{};
  }
  ~CachelineLatency() override {
    line_->~Line();
    ::munmap(line_, sizeof(Line));
  }
  CachelineLatency(const CachelineLatency&) = delete;
  CachelineLatency& operator=(const CachelineLatency&) = delete;

  [[nodiscard]] std::string_view name() const noexcept override { return kCacheline; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "one 64-byte cache line passed back and forth (a 32-bit word, {}; demoted to the "
        "shared cache after each store): the floor of a cross-core hand-off, no payload",
        wait == Wait::Spin ? "polled" : "futex wait / wake");
  }

  // Before the fork: both sides start from 0 (the mapping is inherited).
  void prepare(const LatencyPlan& /*plan*/) override {
    // SYNC: relaxed: no side runs yet; fork() orders it before them.
    line_->word.store(0, std::memory_order_relaxed);
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, "cacheline ping: the echo side did not start");
      return 2;
    }
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      const std::uint32_t v = ping_value(seq);
      put(*line_, v, plan.wait);
      if (await(*line_, v + 1, plan.wait, false) != v + 1) {
        report_error(control, fmt::format("cacheline ping: no answer to {} within {} s", seq,
                                          kPeerTimeoutNs / 1'000'000'000));
        return false;
      }
      return true;
    });
    put(*line_, kStop, plan.wait);
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, "cacheline echo: the ping side did not start");
      return 2;
    }
    for (std::uint64_t seq = 0;; ++seq) {
      const std::uint32_t want = ping_value(seq);
      const std::uint32_t seen = await(*line_, want, plan.wait, true);
      if (seen == kStop) break;
      if (seen != want) {
        report_error(control, fmt::format("cacheline echo: ping {} did not come within {} s", seq,
                                          kPeerTimeoutNs / 1'000'000'000));
        return 3;
      }
      put(*line_, want + 1, plan.wait);
    }
    mark_finished(control);
    return 0;
  }

 private:
  Line* line_ = nullptr;  // MAP_SHARED: the forked sides share it
};

}  // namespace

std::unique_ptr<LatencyTransport> make_cacheline_latency() {
  return std::make_unique<CachelineLatency>();
}

}  // namespace ferry::bench
