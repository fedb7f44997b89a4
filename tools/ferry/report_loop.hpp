#pragma once
// The loop of the verbs that watch a topic and report once a second
// (`topic hz`, `topic bw`, `topic delay`): take samples until Ctrl-C or the
// --duration, and report on time however the samples come.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ferry/ferry.hpp>

#include "interrupt.hpp"

namespace ferry::cli {

inline constexpr std::chrono::seconds kReportEvery{1};
// The longest take: Ctrl-C and the report are noticed within it.
inline constexpr std::chrono::milliseconds kTakeStep{100};

// Hands each sample `sub` takes to on_sample(sample) and, every kReportEvery,
// calls on_report(now) and flushes stdout; returns at Ctrl-C, or after
// `duration_s` seconds when it is above 0.
template <class OnSample, class OnReport>
void take_and_report(RawSubscriber& sub, double duration_s, OnSample&& on_sample,
                     OnReport&& on_report) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto stop = duration_s > 0 ? start + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(duration_s))
                                   : Clock::time_point::max();
  auto next_report = start + kReportEvery;
  while (!interrupted()) {
    const auto now = Clock::now();
    if (now >= next_report) {
      on_report(now);
      std::fflush(stdout);
      next_report += kReportEvery;
      if (next_report < now) next_report = now + kReportEvery;  // we were away: do not burst
    }
    if (now >= stop) break;
    const auto wait = std::min({next_report - now, stop - now, Clock::duration(kTakeStep)});
    if (auto sample = sub.take(std::chrono::duration_cast<std::chrono::nanoseconds>(wait))) {
      on_sample(*sample);
    }
  }
}

}  // namespace ferry::cli
