#pragma once
// Sending and waiting on the transport ring alone, for the raw-ring sides.

#include <fmt/format.h>

#include <cstdint>
#include <span>

#include "ferry/bench/options.hpp"
#include "ferry/bench/spin.hpp"
#include "ferry/transport/ring.hpp"
#include "harness/run_control.hpp"
#include "latency/latency_transport.hpp"

namespace ferry::bench {

// Pushes one message: spinning on a full ring, or push() (spin budget, then
// the space doorbell). False (reported) on an error or after kPeerTimeoutNs.
// `flush`: Now for a message its reader waits for (latency: ferry's lane
// decides so by the gap since its previous publish), Later in a stream.
inline bool raw_give(transport::RingProducer& ring, std::span<const std::byte> msg, Wait wait,
                     RunControl& control, const char* who,
                     transport::Flush flush = transport::Flush::Later) {
  std::expected<void, transport::RingError> r;
  if (wait == Wait::Sleep) {
    r = ring.push(msg, 0, std::chrono::nanoseconds(kPeerTimeoutNs));
  } else {
    (void)spin_until(
        [&] {
          return (r = ring.try_push(msg, 0, {}, flush)) || r.error() != transport::RingError::Full;
        },
        kPeerTimeoutNs);
  }
  if (!r)
    report_error(control, fmt::format("{}: push failed: {}", who, transport::to_string(r.error())));
  return r.has_value();
}

// Copies the next message into `out`: polling try_pop (spin) or pop()
// (sleep: with spin limit 0 it sleeps on the doorbell at once). Returns its
// length, or -1 (reported).
inline long raw_take(transport::RingConsumer& ring, std::span<std::byte> out, Wait wait,
                     RunControl& control, const char* who) {
  std::expected<std::uint32_t, transport::RingError> r =
      std::unexpected(transport::RingError::Empty);
  if (wait == Wait::Sleep) {
    r = ring.pop(out, nullptr, std::chrono::nanoseconds(kPeerTimeoutNs));
  } else {
    (void)spin_until(
        [&] { return (r = ring.try_pop(out)) || r.error() != transport::RingError::Empty; },
        kPeerTimeoutNs);
  }
  if (!r) {
    report_error(control, fmt::format("{}: pop failed: {}", who, transport::to_string(r.error())));
    return -1;
  }
  return static_cast<long>(*r);
}

}  // namespace ferry::bench
