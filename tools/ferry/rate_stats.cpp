#include "rate_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ferry::cli {

std::optional<RateReport> RateWindow::report() const {
  if (entries_.size() < 2) return std::nullopt;
  RateReport r;
  r.window = entries_.size();
  const std::size_t intervals = entries_.size() - 1;
  double sum = 0;
  double sum_sq = 0;
  r.min_interval_s = std::numeric_limits<double>::max();
  std::uint64_t bytes_after_first = 0;
  std::uint64_t bytes = 0;
  r.min_size = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto size = entries_[i].value;
    bytes += size;
    r.min_size = std::min(r.min_size, size);
    r.max_size = std::max(r.max_size, size);
    if (i == 0) continue;
    bytes_after_first += size;
    const double dt = std::chrono::duration<double>(entries_[i].at - entries_[i - 1].at).count();
    sum += dt;
    sum_sq += dt * dt;
    r.min_interval_s = std::min(r.min_interval_s, dt);
    r.max_interval_s = std::max(r.max_interval_s, dt);
  }
  const auto n = static_cast<double>(intervals);
  r.mean_interval_s = sum / n;
  r.std_dev_s = std::sqrt(std::max(0.0, sum_sq / n - r.mean_interval_s * r.mean_interval_s));
  r.rate_hz = r.mean_interval_s > 0 ? 1.0 / r.mean_interval_s : 0;
  r.bytes_per_s = sum > 0 ? static_cast<double>(bytes_after_first) / sum : 0;
  r.mean_size = static_cast<double>(bytes) / static_cast<double>(entries_.size());
  return r;
}

}  // namespace ferry::cli
