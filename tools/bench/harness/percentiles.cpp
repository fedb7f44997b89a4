#include "ferry/bench/percentiles.hpp"

#include <type_traits>
#include <utility>

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

namespace {

// A Percentiles whose every field is `combine` of that field's values over
// the runs (a vector of them, in run order).
template <class Combine>
Percentiles field_by_field(const std::vector<Percentiles>& runs, Combine combine) {
  auto field = [&](auto member) {
    std::vector<std::remove_cvref_t<decltype(Percentiles{}.*member)>> values;
    values.reserve(runs.size());
    for (const auto& r : runs) values.push_back(r.*member);
    return combine(std::move(values));
  };
  return Percentiles{field(&Percentiles::p50), field(&Percentiles::p90),
                     field(&Percentiles::p99), field(&Percentiles::p999),
                     field(&Percentiles::max), field(&Percentiles::samples)};
}

}  // namespace

Percentiles median_of(const std::vector<Percentiles>& runs) {
  return field_by_field(runs, [](auto values) { return median(std::move(values)); });
}

Spread spread_of(const std::vector<Percentiles>& runs) {
  Spread s;
  s.median = median_of(runs);
  if (runs.empty()) return s;
  s.min = field_by_field(runs, [](const auto& values) { return std::ranges::min(values); });
  s.max = field_by_field(runs, [](const auto& values) { return std::ranges::max(values); });
  return s;
}

}  // namespace ferry::bench
