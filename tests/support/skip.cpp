#include "skip.hpp"

#include <doctest/doctest.h>

#include <atomic>

namespace ferry::test {

namespace {
std::atomic<bool> skipped{false};
}  // namespace

void skip_test(const std::string& why) {
  MESSAGE("SKIPPED: " << why);
  // SYNC: relaxed; read by main after every test case ran on this thread.
  skipped.store(true, std::memory_order_relaxed);
}

bool skip_requested() noexcept { return skipped.load(std::memory_order_relaxed); }

}  // namespace ferry::test
