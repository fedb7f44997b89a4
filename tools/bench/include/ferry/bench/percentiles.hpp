#pragma once
// Percentiles of one run's samples, and medians over repeated runs.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace ferry::bench {

struct Percentiles {
  std::int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  std::uint64_t samples = 0;
};

// Sorts `values` in place; the q-quantile is the element at floor(q * (n-1)).
// All zero when `values` is empty.
[[nodiscard]] Percentiles percentiles(std::span<std::int64_t> values) noexcept;

// Field by field median over runs (each percentile's median, not the run
// with the median p50).
[[nodiscard]] Percentiles median_of(const std::vector<Percentiles>& runs);

// Field by field minimum, median and maximum over runs: the spread of each
// percentile across repeats.
struct Spread {
  Percentiles min, median, max;
};
[[nodiscard]] Spread spread_of(const std::vector<Percentiles>& runs);

template <class T>
[[nodiscard]] T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace ferry::bench
