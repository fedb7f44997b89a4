#include "delay_stats.hpp"

#include <algorithm>
#include <vector>

namespace ferry::cli {

void DelayWindow::expire(Clock::time_point now) {
  while (!entries_.empty() && now - entries_.front().at > window_) entries_.pop_front();
}

std::optional<DelayReport> DelayWindow::report() const {
  if (entries_.empty()) return std::nullopt;
  std::vector<std::int64_t> delays;
  delays.reserve(entries_.size());
  for (const auto& t : entries_) delays.push_back(t.value);
  std::sort(delays.begin(), delays.end());
  // Nearest rank: the smallest delay with at least p of the samples at or below it.
  const auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(p * static_cast<double>(delays.size()) + 0.999999);
    return delays[std::clamp<std::size_t>(k, 1, delays.size()) - 1];
  };
  const auto ms = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
  DelayReport r;
  r.count = delays.size();
  r.p50_ms = ms(rank(0.5));
  r.p90_ms = ms(rank(0.9));
  r.max_ms = ms(delays.back());
  r.min_ms = ms(delays.front());
  return r;
}

}  // namespace ferry::cli
