#include "ferry/transport/platform.hpp"

#include <algorithm>
#include <chrono>

#include "ferry/transport/spin.hpp"

namespace ferry::transport {

std::uint32_t pauses_per_spin_step() noexcept {
  // The cheapest of a few short measurements: a preemption only makes one
  // sample slower, and too few pauses per step is harmless (just busier).
  constexpr int kPauses = 256;
  std::int64_t best = INT64_MAX;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kPauses; ++i) cpu_relax();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min<std::int64_t>(
        best, std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  }
  const double per_pause = std::max(0.5, static_cast<double>(best) / kPauses);
  const auto n = static_cast<std::int64_t>(static_cast<double>(kSpinStepNs) / per_pause + 0.5);
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 1, 64));
}

}  // namespace ferry::transport
