#include "ferry/bench/percentiles.hpp"

namespace ferry::bench {

Percentiles percentiles(std::span<std::int64_t> values) noexcept {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
  };
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p99 = at(0.99);
  p.p999 = at(0.999);
  p.max = values.back();
  p.samples = values.size();
  return p;
}

Percentiles median_of(const std::vector<Percentiles>& runs) {
  std::vector<std::int64_t> p50, p90, p99, p999, mx;
  std::vector<std::uint64_t> samples;
  for (const auto& r : runs) {
    p50.push_back(r.p50);
    p90.push_back(r.p90);
    p99.push_back(r.p99);
    p999.push_back(r.p999);
    mx.push_back(r.max);
    samples.push_back(r.samples);
  }
  return Percentiles{median(p50),  median(p90), median(p99),
                     median(p999), median(mx),  median(samples)};
}

Spread spread_of(const std::vector<Percentiles>& runs) {
  Spread s;
  s.median = median_of(runs);
  if (runs.empty()) return s;
  s.min = s.max = runs.front();
  for (const auto& r : runs) {
    s.min.p50 = std::min(s.min.p50, r.p50);
    s.min.p90 = std::min(s.min.p90, r.p90);
    s.min.p99 = std::min(s.min.p99, r.p99);
    s.min.p999 = std::min(s.min.p999, r.p999);
    s.min.max = std::min(s.min.max, r.max);
    s.min.samples = std::min(s.min.samples, r.samples);
    s.max.p50 = std::max(s.max.p50, r.p50);
    s.max.p90 = std::max(s.max.p90, r.p90);
    s.max.p99 = std::max(s.max.p99, r.p99);
    s.max.p999 = std::max(s.max.p999, r.p999);
    s.max.max = std::max(s.max.max, r.max);
    s.max.samples = std::max(s.max.samples, r.samples);
  }
  return s;
}

}  // namespace ferry::bench
