#include "transports/ferry/ferry_side.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/spin.hpp"
#include "harness/private_domain.hpp"
#include "latency/latency_transport.hpp"

namespace ferry::bench {

ferry::Node join_domain(const PrivateDomain& domain, const std::string& role, Wait wait) {
  domain.enter();
  ferry::NodeOptions options;
  options.domain = domain.name();
  // Sleep mode measures the sleeping path: take(timeout) goes to the futex
  // at once instead of polling first (which would hide the wake-up).
  if (wait == Wait::Sleep) options.take_spin = 0;
  return ferry::Node(fmt::format("bench-{}-{}", role, ::getpid()), options);
}

void report_no_sample(RunControl& control, const char* who, const ferry::ErrorCode* error) {
  if (error != nullptr) {
    report_error(control, fmt::format("{}: take failed: {}", who, ferry::to_string(*error)));
  } else {
    report_error(control,
                 fmt::format("{}: no sample within {} s", who, kPeerTimeoutNs / 1'000'000'000));
  }
}

}  // namespace ferry::bench
