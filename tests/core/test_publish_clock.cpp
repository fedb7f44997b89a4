// The publishers' clock (ferry/detail/publish_clock.hpp): once calibrated by
// the runtime threads' ticks it reads CLOCK_REALTIME through the TSC, to
// within a few microseconds of clock_gettime, while a tick rewrites the
// anchor under it (also run under TSan). FERRY_PUBLISH_CLOCK=vdso, or a TSC
// that is not invariant, keeps it uncalibrated (clock_gettime every time).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ferry/detail/publish_clock.hpp"

using ferry::detail::g_publish_clock;
using ferry::detail::publish_clock_tick;
using ferry::detail::publish_time_ns;
using ferry::detail::realtime_ns;

namespace {

// What the kernel says of the TSC (the calibrator reads the same flags).
bool tsc_invariant_here() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
}

bool calibrated() { return g_publish_clock.ns_per_tick_q32.load(std::memory_order_acquire) != 0; }

// Ticks as the runtime threads do (every few ms here) for `span`.
void tick_for(std::chrono::milliseconds span) {
  const auto end = std::chrono::steady_clock::now() + span;
  while (std::chrono::steady_clock::now() < end) {
    publish_clock_tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// |publish_time_ns() - the clock_gettime reads around it|, 0 when inside.
std::uint64_t miss_ns() {
  const std::uint64_t before = realtime_ns();
  const std::uint64_t stamped = publish_time_ns();
  const std::uint64_t after = realtime_ns();
  if (stamped < before) return before - stamped;
  if (stamped > after) return stamped - after;
  return 0;
}

}  // namespace

// Run twice by ctest: as is, and with FERRY_PUBLISH_CLOCK=vdso.
bool vdso_asked() {
  const char* choice = std::getenv("FERRY_PUBLISH_CLOCK");
  return choice != nullptr && std::string(choice) == "vdso";
}

TEST_CASE("publish times follow CLOCK_REALTIME, through the TSC where it is invariant") {
  tick_for(std::chrono::milliseconds(300));
  const bool expected = tsc_invariant_here() && !vdso_asked();
  CHECK(calibrated() == expected);
  if (!expected) MESSAGE("publish() reads clock_gettime here (no invariant TSC, or asked)");
  std::vector<std::uint64_t> misses(100'000);
  for (auto& miss : misses) miss = miss_ns();
  std::sort(misses.begin(), misses.end());
  // Inside the bracket, or within what one rate error and one preemption
  // between the reads can give: the median exact to 2 us, 99% to 20 us.
  CHECK(misses[misses.size() / 2] <= 2'000);
  CHECK(misses[misses.size() * 99 / 100] <= 20'000);
}

TEST_CASE("a tick rewriting the anchor never gives a reader a torn time") {
  tick_for(std::chrono::milliseconds(50));
  std::atomic<bool> stop{false};
  // SYNC: relaxed `stop`; join() orders the rest.
  std::thread ticker([&] {
    while (!stop.load(std::memory_order_relaxed)) publish_clock_tick();
  });
  std::vector<std::uint64_t> misses;
  misses.reserve(1 << 20);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < end && misses.size() < misses.capacity())
    misses.push_back(miss_ns());
  stop.store(true, std::memory_order_relaxed);
  ticker.join();
  std::sort(misses.begin(), misses.end());
  // A torn anchor (one field old, one new) is off by milliseconds at least.
  CHECK(misses.size() > 1000);
  CHECK(misses[misses.size() * 999 / 1000] <= 100'000);
}
