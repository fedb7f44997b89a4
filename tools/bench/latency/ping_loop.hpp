#pragma once
// The pinger's measuring loop, shared by every latency transport.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/percentiles.hpp"
#include "harness/run_control.hpp"
#include "latency/latency_transport.hpp"

namespace ferry::bench {

// Runs plan.warmup round trips, then measures up to plan.rounds of them
// (stopping early after plan.max_measure_ns) and stores the one-way
// percentiles (round trip / 2) in control.latency. `round_trip(seq)` sends
// seq, waits for its echo and checks it; on failure it reports why and
// returns false. One clock read per round: each sample's end is the next
// one's start. Nothing is allocated once measuring starts.
template <class RoundTrip>
bool ping_loop(const LatencyPlan& plan, RunControl& control, RoundTrip&& round_trip) {
  std::vector<std::int64_t> samples(plan.rounds);  // zero-filled: its pages are touched now
  std::uint64_t seq = 0;
  const std::int64_t warmup_end =
      now_ns() + std::max<std::int64_t>(plan.max_measure_ns / 4, 50'000'000);
  for (std::uint64_t i = 0; i < plan.warmup; ++i) {
    if (!round_trip(seq++)) return false;
    if ((i & 63) == 0 && now_ns() > warmup_end) break;
  }
  std::size_t n = 0;
  std::int64_t t0 = now_ns();
  const std::int64_t stop_at = t0 + plan.max_measure_ns;
  while (n < samples.size()) {
    if (!round_trip(seq++)) return false;
    const std::int64_t t1 = now_ns();
    samples[n++] = (t1 - t0) / 2;
    t0 = t1;
    if (t1 > stop_at) break;
  }
  control.latency.one_way = percentiles(std::span(samples.data(), n));
  control.latency.ok = n > 0 ? 1 : 0;
  return n > 0;
}

}  // namespace ferry::bench
