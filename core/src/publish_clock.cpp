// Calibrates the publishers' TSC clock (ferry/detail/publish_clock.hpp)
// against clock_gettime(CLOCK_REALTIME), from the nodes' runtime threads.
//
// Schedule: the first pair on the first tick; an anchor 20 ms later, then
// each gap doubled up to one second. The rate is taken between the new pair
// and the oldest of the last kHistory pairs (~16 s once running), so one
// pair's jitter (tens of ns) weighs less than 1e-8 of the rate, and NTP's
// slewing of the system clock is followed within seconds. A pair that does
// not land within kStepNs of the current anchor's prediction is a step of
// the system clock: the history restarts from it (the rate is kept).
//
// No allocation, and no lock that a fork could leave held: one try-flag. A
// child forked while another thread held it clears it in a pthread_atfork
// handler and calibrates afresh (calibrate_afresh_in_child()); a child
// forked while nobody held it keeps the parent's calibration and goes on.

#include "ferry/detail/publish_clock.hpp"

#include <fcntl.h>

#include "ferry/detail/publish_clock_calibration.hpp"
#if defined(__x86_64__)
#include <x86intrin.h>  // __rdtsc, _mm_lfence
#endif
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

namespace ferry::detail {
namespace {

#if defined(__x86_64__)

constexpr std::uint64_t kFirstGapNs = 20'000'000;      // first anchor after 20 ms
constexpr std::uint64_t kMaxGapNs = 1'000'000'000;     // then at least every second
constexpr std::uint64_t kStepNs = 1'000'000;           // a 1 ms miss: the clock stepped
constexpr std::uint64_t kMaxPairWidthTicks = 200'000;  // a pair read across a preemption
constexpr std::size_t kHistory = 16;
constexpr const char* kClocksourcePath =
    "/sys/devices/system/clocksource/clocksource0/current_clocksource";

// One reading of both clocks: the TSC just before the clock_gettime. The
// vDSO reads its own TSC somewhere inside the call, so a stamp converted
// from this pair errs late by at most that distance (a few ns), never
// early: taking the middle of the call instead made stamps up to ~10 ns
// earlier than a clock_gettime read before the publish (seen on AMD EPYC).
struct ClockPair {
  std::uint64_t tsc = 0;
  std::uint64_t ns = 0;
};

// Whether the publishers may use the TSC: the kernel keeps time with it
// (clocksource_is_tsc()), and the user did not ask for clock_gettime.
bool tsc_is_usable() noexcept {
  if (const char* choice = std::getenv("FERRY_PUBLISH_CLOCK");
      choice != nullptr && std::string_view(choice) == "vdso") {
    return false;  // the user asked for clock_gettime on every publish
  }
  return clocksource_is_tsc(kClocksourcePath);
}

// Best of a few readings: the one whose clock_gettime took the fewest ticks.
bool read_pair(ClockPair& out) noexcept {
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int attempt = 0; attempt < 4; ++attempt) {
    _mm_lfence();
    const std::uint64_t before = __rdtsc();
    const std::uint64_t ns = realtime_ns();
    _mm_lfence();
    const std::uint64_t after = __rdtsc();
    if (after < before) continue;
    if (after - before < best_width) {
      best_width = after - before;
      out = ClockPair{before, ns};
    }
  }
  return best_width <= kMaxPairWidthTicks;
}

class Calibrator {
 public:
  void tick() noexcept {
    if (!checked_) {
      checked_ = true;
      usable_ = tsc_is_usable();
    }
    if (!usable_) return;
    ClockPair now;
    if (!read_pair(now)) return;
    if (count_ == 0) {
      restart(now);
      return;
    }
    if (now.ns < next_due_ns_ && now.ns >= newest().ns) return;
    if (stepped(now)) {
      restart(now);
      return;
    }
    const ClockPair& oldest = history_[(next_ + kHistory - count_) % kHistory];
    if (now.tsc <= oldest.tsc || now.ns <= oldest.ns) {
      restart(now);
      return;
    }
    const auto rate = static_cast<std::uint64_t>((static_cast<Uint128>(now.ns - oldest.ns) << 32U) /
                                                 (now.tsc - oldest.tsc));
    // 0.05 to 20 ns a tick (20 GHz to 50 MHz): anything else is a misreading.
    if (rate < (std::uint64_t{1} << 32U) / 20 || rate > (std::uint64_t{20} << 32U)) {
      restart(now);
      return;
    }
    publish(now, rate);
    remember(now);
    gap_ns_ = std::min(gap_ns_ * 2, kMaxGapNs);
    next_due_ns_ = now.ns + gap_ns_;
  }

 private:
  // The first pair, or the first after a step: wait kFirstGapNs for a rate.
  void restart(const ClockPair& now) noexcept {
    count_ = 0;
    remember(now);
    gap_ns_ = kFirstGapNs;
    next_due_ns_ = now.ns + gap_ns_;
    const std::uint64_t rate = published_rate_;
    if (rate != 0) publish(now, rate);  // a step: keep the rate, move the anchor
  }
  void remember(const ClockPair& pair) noexcept {
    history_[next_] = pair;
    next_ = (next_ + 1) % kHistory;
    count_ = std::min(count_ + 1, kHistory);
  }
  [[nodiscard]] const ClockPair& newest() const noexcept {
    return history_[(next_ + kHistory - 1) % kHistory];
  }
  // Whether the system clock moved away from what the anchor predicts.
  [[nodiscard]] bool stepped(const ClockPair& now) const noexcept {
    if (published_rate_ == 0) return now.ns < newest().ns;
    const std::uint64_t predicted =
        published_ns_ +
        static_cast<std::uint64_t>(
            (static_cast<Uint128>(now.tsc - published_tsc_) * published_rate_) >> 32U);
    const std::uint64_t miss = predicted > now.ns ? predicted - now.ns : now.ns - predicted;
    return miss > kStepNs;
  }
  void publish(const ClockPair& anchor, std::uint64_t rate) noexcept {
    PublishClockAnchor& clock = g_publish_clock;
    // SYNC: relaxed; only this (flag-holding) thread writes `sequence`.
    const std::uint32_t sequence = clock.sequence.load(std::memory_order_relaxed);
    // SYNC: relaxed store of the odd count; each release store below orders
    // it before that field's new value (readers: publish_time_ns()).
    clock.sequence.store(sequence + 1, std::memory_order_relaxed);
    clock.anchor_tsc.store(anchor.tsc, std::memory_order_release);
    clock.anchor_ns.store(anchor.ns, std::memory_order_release);
    clock.ns_per_tick_q32.store(rate, std::memory_order_release);
    // SYNC: release, pairs with the reader's first acquire load of
    // `sequence`: an even count read there brings the fields written above.
    clock.sequence.store(sequence + 2, std::memory_order_release);
    published_tsc_ = anchor.tsc;
    published_ns_ = anchor.ns;
    published_rate_ = rate;
  }

  bool checked_ = false;
  bool usable_ = false;
  std::array<ClockPair, kHistory> history_{};
  std::size_t next_ = 0;   // where the next pair goes
  std::size_t count_ = 0;  // pairs held (<= kHistory)
  std::uint64_t gap_ns_ = kFirstGapNs;
  std::uint64_t next_due_ns_ = 0;
  std::uint64_t published_tsc_ = 0;
  std::uint64_t published_ns_ = 0;
  std::uint64_t published_rate_ = 0;
};

Calibrator g_calibrator;  // written only by the thread holding g_ticking
std::atomic_flag g_ticking;

// In a forked child (pthread_atfork), with only the forking thread: a flag
// held at the fork belongs to a thread that does not exist here, and would
// stay held for good (the child's clock never re-anchored). The child
// starts calibrating afresh: its publishers use clock_gettime until its
// runtime threads have a new anchor (~20 ms), since the one inherited may
// have been half rewritten.
void calibrate_afresh_in_child() noexcept {
  // SYNC: relaxed, all of these: the child has one thread now.
  if (g_ticking.test_and_set(std::memory_order_relaxed)) {
    PublishClockAnchor& clock = g_publish_clock;
    const std::uint32_t sequence = clock.sequence.load(std::memory_order_relaxed);
    clock.ns_per_tick_q32.store(0, std::memory_order_relaxed);
    // Even again (a rewrite cut short left it odd), and moved on.
    clock.sequence.store((sequence | 1U) + 1U, std::memory_order_relaxed);
    std::construct_at(&g_calibrator);
  }
  g_ticking.clear(std::memory_order_relaxed);
}

#endif  // __x86_64__

}  // namespace

bool clocksource_is_tsc(const char* path) noexcept {
  // A stack buffer and plain system calls: the runtime thread allocates nothing.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::array<char, 64> text{};
  const ssize_t got = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (got <= 0) return false;
  std::string_view name(text.data(), static_cast<std::size_t>(got));
  if (name.ends_with('\n')) name.remove_suffix(1);
  return name == "tsc";
}

void publish_clock_hold_for_test(bool held) noexcept {
#if defined(__x86_64__)
  if (held) {
    (void)g_ticking.test_and_set(std::memory_order_acquire);
  } else {
    g_ticking.clear(std::memory_order_release);
  }
#else
  (void)held;
#endif
}

void publish_clock_tick() noexcept {
#if defined(__x86_64__)
  // Before the flag is ever taken: a fork can only catch it held after this.
  static const bool fork_handled =
      ::pthread_atfork(nullptr, nullptr, calibrate_afresh_in_child) == 0;
  (void)fork_handled;
  // SYNC: acquire/release on the flag hands g_calibrator from one runtime
  // thread to the next; a thread that finds it held skips this beat.
  if (g_ticking.test_and_set(std::memory_order_acquire)) return;
  g_calibrator.tick();
  g_ticking.clear(std::memory_order_release);
#endif
}

}  // namespace ferry::detail
