#pragma once
// A C timeout (nanoseconds, unsigned) as the C++ API's: values past what
// std::chrono::nanoseconds holds wait as long as it can say (292 years).

#include <chrono>
#include <cstdint>
#include <limits>

#include "ferry/transport/platform.hpp"  // FERRY_HOT

namespace ferry::c {

FERRY_HOT inline std::chrono::nanoseconds to_timeout(std::uint64_t ns) noexcept {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns < kMax ? ns : kMax));
}

}  // namespace ferry::c
