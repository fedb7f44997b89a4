#include "ferry_side.hpp"

#include <unistd.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/spin.hpp"
#include "latency_transport.hpp"
#include "private_domain.hpp"

namespace ferry::bench {

ferry::Node join_domain(const PrivateDomain& domain, const std::string& role) {
  domain.enter();
  ferry::NodeOptions options;
  options.domain = domain.name();
  return ferry::Node(fmt::format("bench-{}-{}", role, ::getpid()), options);
}

std::optional<ferry::Sample<ferry::Bytes>> next_sample(ferry::Subscriber<ferry::Bytes>& sub, Wait wait,
                                                       RunControl& control, const char* who) {
  std::optional<ferry::Sample<ferry::Bytes>> got;
  std::optional<ferry::ErrorCode> error;
  if (wait == Wait::Sleep) {
    auto r = sub.try_take(std::chrono::nanoseconds(kPeerTimeoutNs));
    if (!r) {
      error = r.error();
    } else {
      got = std::move(*r);
    }
  } else {
    (void)spin_until(
        [&] {
          auto r = sub.try_take();
          if (!r) {
            error = r.error();
            return true;
          }
          if (!*r) return false;
          got = std::move(*r);
          return true;
        },
        kPeerTimeoutNs);
  }
  if (error) {
    report_error(control, fmt::format("{}: take failed: {}", who, ferry::to_string(*error)));
  } else if (!got) {
    report_error(control, fmt::format("{}: no sample within {} s", who, kPeerTimeoutNs / 1'000'000'000));
  }
  return got;
}

std::optional<ferry::RawSample> next_sample(ferry::RawSubscriber& sub, Wait wait, RunControl& control,
                                            const char* who) {
  std::optional<ferry::RawSample> got;
  if (wait == Wait::Sleep) {
    got = sub.take(std::chrono::nanoseconds(kPeerTimeoutNs));
  } else {
    (void)spin_until([&] { return (got = sub.take()).has_value(); }, kPeerTimeoutNs);
  }
  if (!got) report_error(control, fmt::format("{}: no sample within {} s", who, kPeerTimeoutNs / 1'000'000'000));
  return got;
}

}  // namespace ferry::bench
