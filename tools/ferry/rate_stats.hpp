#pragma once
// The statistics of `ferry topic hz` and `ferry topic bw`: arrival times and
// sizes of the last N samples.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "timed_window.hpp"

namespace ferry::cli {

struct RateReport {
  std::size_t window = 0;  // samples the figures are computed from
  double rate_hz = 0;      // 1 / mean interval
  double mean_interval_s = 0;
  double min_interval_s = 0;
  double max_interval_s = 0;
  double std_dev_s = 0;    // of the intervals
  double bytes_per_s = 0;  // bytes of the window (after its first sample) / its time span
  double mean_size = 0;
  std::uint64_t min_size = 0;
  std::uint64_t max_size = 0;
};

// A value is the sample's size in bytes.
class RateWindow : public TimedWindow<std::uint64_t> {
 public:
  explicit RateWindow(std::size_t capacity) : TimedWindow(capacity < 2 ? 2 : capacity) {}

  // Empty until two samples have arrived.
  [[nodiscard]] std::optional<RateReport> report() const;
};

}  // namespace ferry::cli
