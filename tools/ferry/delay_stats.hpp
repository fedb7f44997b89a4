#pragma once
// The statistics of `ferry topic delay`: publish-to-take delays (the
// sample's publish_time_ns against the clock when it was taken) of the
// samples taken in the last `window` of time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace ferry::cli {

struct DelayReport {
  std::size_t count = 0;  // samples in the window
  double p50_ms = 0;
  double p90_ms = 0;
  double max_ms = 0;
  double min_ms = 0;
};

class DelayWindow {
 public:
  using Clock = std::chrono::steady_clock;
  // At most `max_samples` are kept (the oldest go first), so a fast topic
  // cannot grow the window without bound.
  explicit DelayWindow(Clock::duration window, std::size_t max_samples = std::size_t{1} << 20)
      : window_(window), max_samples_(max_samples == 0 ? 1 : max_samples) {}

  // A sample taken at `at` (steady clock) that was published `delay_ns`
  // before (realtime clocks; negative when the clock was stepped back).
  void add(Clock::time_point at, std::int64_t delay_ns);
  // Drops what is older than the window before `now`.
  void expire(Clock::time_point now);
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }
  // Empty when no sample is in the window.
  [[nodiscard]] std::optional<DelayReport> report() const;

 private:
  struct Taken {
    Clock::time_point at;
    std::int64_t delay_ns;
  };
  Clock::duration window_;
  std::size_t max_samples_;
  std::deque<Taken> taken_;
  std::uint64_t total_ = 0;
};

}  // namespace ferry::cli
