#pragma once
// The one clock every benchmark reads: steady, in nanoseconds.

#include <chrono>
#include <cstdint>

namespace ferry::bench {

using Clock = std::chrono::steady_clock;

[[nodiscard]] inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace ferry::bench
