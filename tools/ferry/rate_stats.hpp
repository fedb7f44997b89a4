#pragma once
// The statistics of `ferry topic hz` and `ferry topic bw`: arrival times and
// sizes of the last N samples.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

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

class RateWindow {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateWindow(std::size_t capacity) : capacity_(capacity < 2 ? 2 : capacity) {}

  void add(Clock::time_point at, std::uint64_t size);
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }
  // Empty until two samples have arrived.
  [[nodiscard]] std::optional<RateReport> report() const;

 private:
  struct Arrival {
    Clock::time_point at;
    std::uint64_t size;
  };
  std::size_t capacity_;
  std::deque<Arrival> arrivals_;
  std::uint64_t total_ = 0;
};

}  // namespace ferry::cli
