#pragma once
// The seed of a randomised test: $FERRY_TEST_SEED when set (to replay a
// failure), else a fresh one; printed in the test's output either way.

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace ferry::test {

[[nodiscard]] inline std::uint64_t test_seed() {
  std::uint64_t seed = 0;
  if (const char* given = std::getenv("FERRY_TEST_SEED"); given != nullptr && *given != '\0') {
    seed = std::stoull(given);
  } else {
    std::random_device device;
    seed = (static_cast<std::uint64_t>(device()) << 32) | device();
  }
  MESSAGE("random seed " << seed << " (FERRY_TEST_SEED=" << seed << " replays it)");
  return seed;
}

}  // namespace ferry::test
