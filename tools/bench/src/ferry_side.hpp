#pragma once
// What the ferry sides of both benchmarks share: joining the private domain,
// waiting until ferryd matched the ports, and waiting for the next sample.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/options.hpp"
#include "ferry/ferry.hpp"
#include "run_control.hpp"
#include "seq.hpp"

namespace ferry::bench {

class PrivateDomain;

// A node in the benchmark's private domain (the side's environment points there).
[[nodiscard]] ferry::Node join_domain(const PrivateDomain& domain, const std::string& role);

// Waits (sleeping 1 ms between checks) until `matched()` holds; false after 10 s.
template <class Pred>
[[nodiscard]] bool wait_matched(Pred&& matched) {
  const std::int64_t deadline = now_ns() + 10'000'000'000;
  while (!matched()) {
    if (now_ns() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The next sample: polls take() (spin) or blocks in take(timeout) (sleep).
// nullopt after kPeerTimeoutNs or on an error, which it reports as `who`.
[[nodiscard]] std::optional<ferry::Sample<ferry::Bytes>> next_sample(ferry::Subscriber<ferry::Bytes>& sub,
                                                                     Wait wait, RunControl& control,
                                                                     const char* who);
// The same for a raw port (the topic's own fixed-size type).
[[nodiscard]] std::optional<ferry::RawSample> next_sample(ferry::RawSubscriber& sub, Wait wait, RunControl& control,
                                                          const char* who);

}  // namespace ferry::bench
