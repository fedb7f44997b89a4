#include "fanout/fanout_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace ferry::bench {

namespace {

using Json = nlohmann::ordered_json;

struct Medians {
  std::int64_t publish = 0, publish_p90 = 0, first = 0, last = 0, last_p90 = 0;
  std::size_t runs = 0;
};

Medians medians(const FanoutCell& cell) {
  Medians m;
  m.runs = cell.runs.size();
  if (m.runs == 0) return m;
  std::vector<Percentiles> pub, first, last;
  for (const auto& r : cell.runs) {
    pub.push_back(r.publish);
    first.push_back(r.first_wake);
    last.push_back(r.last_wake);
  }
  const Percentiles p = median_of(pub), f = median_of(first), l = median_of(last);
  m.publish = p.p50;
  m.publish_p90 = p.p90;
  m.first = f.p50;
  m.last = l.p50;
  m.last_p90 = l.p90;
  return m;
}

std::string us(std::int64_t ns) { return fmt::format("{:.2f} us", static_cast<double>(ns) / 1e3); }

}  // namespace

void print_fanout(std::FILE* out, const FanoutReport& r) {
  const FanoutOptions& o = r.options;
  if (o.json) {
    for (std::size_t i = 0; i < o.subscribers.size(); ++i) {
      Json results = Json::array();
      for (std::size_t t = 0; t < o.transports.size(); ++t) {
        const Medians m = medians(r.cells[i][t]);
        if (m.runs == 0) continue;
        results.push_back(Json{{"transport", o.transports[t]},
                               {"publish_p50_ns", m.publish},
                               {"publish_p90_ns", m.publish_p90},
                               {"first_wake_p50_ns", m.first},
                               {"last_wake_p50_ns", m.last},
                               {"last_wake_p90_ns", m.last_p90},
                               {"runs", m.runs}});
      }
      fmt::print(out, "{}\n",
                 Json{{"bench", "fanout"},
                      {"domain", r.domain},
                      {"size", 64},
                      {"subscribers", o.subscribers[i]},
                      {"samples", o.samples},
                      {"gap_us", o.gap_us},
                      {"repeat", o.repeat},
                      {"results", results}}
                     .dump());
    }
    return;
  }
  fmt::print(out, "ferry bench fanout: 1 publisher, K subscribers asleep between 64 B samples\n");
  fmt::print(out, "machine: {}\n", to_string(r.machine));
  fmt::print(out,
             "setup:   {} samples per run after a warm-up, {} us after the last take; private "
             "domain {}; medians of {} repeat(s)\n",
             o.samples, o.gap_us, r.domain, o.repeat);
  for (std::size_t t = 0; t < o.transports.size(); ++t) {
    fmt::print(out, "  {:<12} {}\n", o.transports[t], r.described[t]);
  }
  fmt::print(out, "\npublish cost p50 / first subscriber awake p50 / last subscriber awake p50\n");
  fmt::print(out, "{:>4}", "K");
  for (const auto& t : o.transports) fmt::print(out, "  {:>34}", t);
  fmt::print(out, "\n");
  for (std::size_t i = 0; i < o.subscribers.size(); ++i) {
    fmt::print(out, "{:>4}", o.subscribers[i]);
    for (std::size_t t = 0; t < o.transports.size(); ++t) {
      const Medians m = medians(r.cells[i][t]);
      std::string cell = m.runs == 0
                             ? "failed"
                             : fmt::format("{} / {} / {}", us(m.publish), us(m.first), us(m.last));
      fmt::print(out, "  {:>34}", cell);
    }
    fmt::print(out, "\n");
  }
  if (o.subscribers.size() >= 2) {
    // What each extra subscriber adds to the publisher, between the smallest
    // and the largest K.
    const std::size_t lo = 0, hi = o.subscribers.size() - 1;
    const double dk =
        static_cast<double>(o.subscribers[hi]) - static_cast<double>(o.subscribers[lo]);
    fmt::print(out, "\nper extra subscriber (K {} -> {}), publish cost:", o.subscribers[lo],
               o.subscribers[hi]);
    for (std::size_t t = 0; t < o.transports.size(); ++t) {
      const Medians a = medians(r.cells[lo][t]), b = medians(r.cells[hi][t]);
      if (a.runs == 0 || b.runs == 0 || dk <= 0) continue;
      fmt::print(out, "  {} {:.2f} us", o.transports[t],
                 static_cast<double>(b.publish - a.publish) / dk / 1e3);
    }
    fmt::print(out, "\n");
  }
}

}  // namespace ferry::bench
