#pragma once
// The statistics of `ferry topic delay`: publish-to-take delays (the
// sample's publish_time_ns against the clock when it was taken) of the
// samples taken in the last `window` of time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "timed_window.hpp"

namespace ferry::cli {

struct DelayReport {
  std::size_t count = 0;  // samples in the window
  double p50_ms = 0;
  double p90_ms = 0;
  double max_ms = 0;
  double min_ms = 0;
};

// A value is the delay in nanoseconds (realtime clocks; negative when the
// clock was stepped back).
class DelayWindow : public TimedWindow<std::int64_t> {
 public:
  // At most `max_samples` are kept (the oldest go first), so a fast topic
  // cannot grow the window without bound.
  explicit DelayWindow(Clock::duration window, std::size_t max_samples = std::size_t{1} << 20)
      : TimedWindow(max_samples == 0 ? 1 : max_samples), window_(window) {}

  // Drops what is older than the window before `now`.
  void expire(Clock::time_point now);
  // Empty when no sample is in the window.
  [[nodiscard]] std::optional<DelayReport> report() const;

 private:
  Clock::duration window_;
};

}  // namespace ferry::cli
