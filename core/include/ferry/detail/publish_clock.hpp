#pragma once
// The time every publish() stamps on its sample (SampleInfo::publish_time_ns,
// CLOCK_REALTIME), read from the TSC in about half of what clock_gettime
// costs. Why and how, and its calibration by the nodes' runtime threads:
// ferry/detail/publish_clock_calibration.hpp.

#include <time.h>

#include <atomic>
#include <cstdint>

#include "ferry/transport/platform.hpp"  // FERRY_HOT, kCacheLine

namespace ferry::detail {

// CLOCK_REALTIME in nanoseconds from the vDSO (no system call).
[[nodiscard]] FERRY_HOT inline std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The conversion the publishers read, written by publish_clock_tick() under
// a seqlock (`sequence` odd while it writes). Rate 0: not calibrated.
struct alignas(transport::kCacheLine) PublishClockAnchor {
  std::atomic<std::uint32_t> sequence{0};
  std::atomic<std::uint64_t> anchor_tsc{0};
  std::atomic<std::uint64_t> anchor_ns{0};
  std::atomic<std::uint64_t> ns_per_tick_q32{0};  // nanoseconds per tick x 2^32
};

inline PublishClockAnchor g_publish_clock;  // one per process

// 64 x 64 -> 128-bit products (GCC and Clang).
__extension__ using Uint128 = unsigned __int128;
__extension__ using Int128 = __int128;

// The realtime clock at TSC value `tsc`, from an anchor (`anchor_tsc` read
// at `anchor_ns`) and a rate in nanoseconds per tick x 2^32.
[[nodiscard]] FERRY_HOT inline std::uint64_t tsc_to_realtime_ns(std::uint64_t tsc,
                                                                std::uint64_t anchor_tsc,
                                                                std::uint64_t anchor_ns,
                                                                std::uint64_t rate) noexcept {
  // Signed: a TSC read a little before the anchor is a time a little before
  // anchor_ns, not ~190 years after it (C++20 defines the wrap-around).
  const auto ticks = static_cast<std::int64_t>(tsc - anchor_tsc);
  const auto offset_ns =
      static_cast<std::int64_t>((static_cast<Int128>(ticks) * static_cast<Int128>(rate)) >> 32U);
  return anchor_ns + static_cast<std::uint64_t>(offset_ns);
}

// The realtime clock as publish() stamps it: never spins; clock_gettime
// when there is no calibration or the runtime thread is rewriting it now.
[[nodiscard]] FERRY_HOT inline std::uint64_t publish_time_ns() noexcept {
#if defined(__x86_64__)
  PublishClockAnchor& clock = g_publish_clock;
  // SYNC: acquire, pairs with the release store that ends a rewrite in
  // publish_clock_tick(): the fields read below are at least that rewrite's.
  const std::uint32_t before = clock.sequence.load(std::memory_order_acquire);
  // SYNC: acquire loads, each pairing with the release store of that field
  // in a rewrite: a value from a rewrite brings the odd `sequence` that
  // rewrite began with, and the later load of `sequence` (not reordered
  // above an acquire) then reads differently. (Acquire loads rather than an
  // acquire fence: TSan understands them; on x86 both are plain loads.)
  const std::uint64_t rate = clock.ns_per_tick_q32.load(std::memory_order_acquire);
  const std::uint64_t anchor_tsc = clock.anchor_tsc.load(std::memory_order_acquire);
  const std::uint64_t anchor_ns = clock.anchor_ns.load(std::memory_order_acquire);
  if (rate != 0 && (before & 1U) == 0 && clock.sequence.load(std::memory_order_relaxed) == before)
      [[likely]] {
    // No lfence: a few cycles early or late is still that publish's time.
    // The builtin, not <x86intrin.h>'s __rdtsc() (~55,000 lines).
    return tsc_to_realtime_ns(__builtin_ia32_rdtsc(), anchor_tsc, anchor_ns, rate);
  }
#endif
  return realtime_ns();
}

}  // namespace ferry::detail
