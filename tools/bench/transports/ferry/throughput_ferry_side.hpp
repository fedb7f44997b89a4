#pragma once
// The receiving side of ferry's throughput transports (copy and loan): one
// subscriber process counting what one publisher streams.

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string>

#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

// The bytes of a taken sample, whichever kind of port took it.
[[nodiscard]] inline std::span<const std::byte> sample_bytes(const ferry::RawSample& s) noexcept {
  return s.bytes();
}
[[nodiscard]] inline std::span<const std::byte> sample_bytes(
    const ferry::Sample<ferry::Bytes>& s) noexcept {
  return {s->data(), s->size()};
}

// Whether ferryd matched publisher `pub` with every receiver of the plan
// within 10 s; reports it when not.
template <class Pub>
bool publisher_matched(const Pub& pub, const ThroughputPlan& plan, RunControl& control,
                       std::string_view name) {
  if (wait_matched([&] { return pub.subscriber_count() == plan.receivers; })) return true;
  report_error(
      control,
      fmt::format("{} publisher: ferryd did not match every subscriber within 10 s", name));
  return false;
}

// Waits until ferryd matched `sub` with the publisher, then counts samples
// (receive_loop); one of the wrong size counts as a sequence error. The
// side's exit code: 0, 2 (never matched) or 3 (the stream failed).
template <class Sub>
int receive_samples(Sub& sub, const ThroughputPlan& plan, RunControl& control, std::uint32_t index,
                    std::string_view name) {
  const std::string who = fmt::format("{} subscriber", name);
  if (!wait_matched([&] { return sub.publisher_count() == 1; })) {
    report_error(control, who + ": ferryd did not match the publisher within 10 s");
    return 2;
  }
  const bool ok = receive_loop(plan, control, index, [&](std::uint64_t& seq) {
    auto s = next_sample(sub, plan.wait, control, who.c_str());
    if (!s) return false;
    const auto bytes = sample_bytes(*s);
    seq = bytes.size() == plan.size ? read_seq(bytes.data()) : 0;
    return true;
  });
  return ok ? 0 : 3;
}

// --batch N: take_many of up to N, polled (spin) or waiting for the first
// (sleep), handed to receive_loop one message at a time.
inline int receive_batches(ferry::RawSubscriber& sub, const ThroughputPlan& plan,
                           RunControl& control, std::uint32_t index, std::string_view name) {
  const std::string who = fmt::format("{} subscriber", name);
  if (!wait_matched([&] { return sub.publisher_count() == 1; })) {
    report_error(control, who + ": ferryd did not match the publisher within 10 s");
    return 2;
  }
  BatchReader reader(plan.size, plan.batch);
  auto refill = [&](std::span<std::byte> out, std::size_t) -> std::size_t {
    std::size_t n = 0;
    if (plan.wait == Wait::Sleep) {
      n = sub.take_many(out, std::chrono::nanoseconds(kPeerTimeoutNs)).value_or(0);
    } else {
      (void)spin_until([&] { return (n = sub.take_many(out).value_or(0)) != 0; }, kPeerTimeoutNs);
    }
    if (n == 0) report_error(control, who + ": no sample within the peer timeout");
    return n;
  };
  const bool ok = receive_loop(plan, control, index,
                               [&](std::uint64_t& seq) { return reader.next(seq, refill); });
  return ok ? 0 : 3;
}

}  // namespace ferry::bench
