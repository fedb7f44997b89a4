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
#include "ferry/bench/spin.hpp"
#include "ferry/ferry.hpp"
#include "harness/bench_config.hpp"
#include "harness/run_control.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"  // LatencyPlan, kPeerTimeoutNs

namespace ferry::bench {

class PrivateDomain;

// A node in the benchmark's private domain (the side's environment points
// there); with Wait::Sleep its subscribers' take(timeout) sleeps at once.
[[nodiscard]] ferry::Node join_domain(const PrivateDomain& domain, const std::string& role,
                                      Wait wait);

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

// A latency side: waits until ferryd matched both its ports (one peer each)
// and the peer side started; false, reported as `who`, when either takes
// longer than 10 s.
template <class Pub, class Sub>
[[nodiscard]] bool latency_side_ready(const Pub& pub, const Sub& sub, RunControl& control,
                                      const std::string& who, const char* peer) {
  if (!wait_matched([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; })) {
    report_error(control, who + ": ferryd did not match the " + peer + " side within 10 s");
    return false;
  }
  if (!start_barrier(control, 2, 10'000'000'000)) {
    report_error(control, who + ": the " + peer + " side did not start");
    return false;
  }
  return true;
}

// The two topics of a latency side in its run's slot: it publishes on `out`
// and takes from `in` (the ping side publishes pings and takes pongs, the
// echo side the reverse).
struct SideTopics {
  std::string out;
  std::string in;
};
[[nodiscard]] inline SideTopics ping_side_topics(const LatencyPlan& plan, FerryPath path) {
  return {slot_topic(latency_ping_topic(plan.size, path), plan.run),
          slot_topic(latency_pong_topic(plan.size, path), plan.run)};
}
[[nodiscard]] inline SideTopics echo_side_topics(const LatencyPlan& plan, FerryPath path) {
  const SideTopics ping = ping_side_topics(plan, path);
  return {ping.in, ping.out};
}

// Whether the echo side's pong reached the ping side; reports it as `who` when not.
[[nodiscard]] inline bool pong_delivered(const ferry::PublishResult& r, RunControl& control,
                                         const std::string& who) {
  if (r.delivered != 0) return true;
  report_error(control, who + ": the pong reached no subscriber");
  return false;
}

// Reports why next_sample() returned nothing (out of line: not the hot path).
void report_no_sample(RunControl& control, const char* who, const ferry::ErrorCode* error);

// The next sample: polls take() (spin) or blocks in take(timeout) (sleep).
// nullopt after kPeerTimeoutNs or on an error, which it reports as `who`.
// Inline, like the raw-ring's raw_take: the measured path is the API call
// in the caller's loop, not a harness function around it.
template <class T>
[[nodiscard]] inline std::optional<ferry::Sample<T>> next_sample(ferry::Subscriber<T>& sub,
                                                                 Wait wait, RunControl& control,
                                                                 const char* who) {
  std::optional<ferry::Sample<T>> got;
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
  if (!got) report_no_sample(control, who, error ? &*error : nullptr);
  return got;
}
// The same for a raw port (the topic's own fixed-size type).
[[nodiscard]] inline std::optional<ferry::RawSample> next_sample(ferry::RawSubscriber& sub,
                                                                 Wait wait, RunControl& control,
                                                                 const char* who) {
  std::optional<ferry::RawSample> got;
  if (wait == Wait::Sleep) {
    got = sub.take(std::chrono::nanoseconds(kPeerTimeoutNs));
  } else {
    // Forced inline like the API below it: an out-of-line call in the poll
    // loop costs ferry ~100 ns one-way (ferry/detail/lane.hpp).
    (void)spin_until(
        [&]() __attribute__((always_inline)) { return (got = sub.take()).has_value(); },
        kPeerTimeoutNs);
  }
  if (!got) report_no_sample(control, who, nullptr);
  return got;
}

}  // namespace ferry::bench
