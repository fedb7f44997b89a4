#pragma once
// The one knob for how much work the long tests do: all of it in a normal
// build, a fraction under a sanitizer (ASan and TSan run 5-20x slower), and
// FERRY_TEST_SCALE (a factor, e.g. 0.1 or 4) overriding both.

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace ferry::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Iteration counts: `n` in a normal build, n / `sanitized_divisor` under a
// sanitizer; FERRY_TEST_SCALE overrides both. Never below 1.
inline std::uint64_t scaled(std::uint64_t n, std::uint64_t sanitized_divisor = 8) {
  if (const char* env = std::getenv("FERRY_TEST_SCALE"); env != nullptr && *env != '\0') {
    const double f = std::strtod(env, nullptr);
    if (f > 0) {
      return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(n) * f));
    }
  }
  return kSanitized ? std::max<std::uint64_t>(1, n / sanitized_divisor) : n;
}

}  // namespace ferry::test
