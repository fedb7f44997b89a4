#include "harness/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "ferry/bench/clock.hpp"
#include "ferry/config/units.hpp"

namespace ferry::bench {

RunSetup describe_run(const CommonOptions& options) {
  RunSetup setup;
  setup.machine = describe_machine();
  setup.cpus = options.cpus;
  setup.pinned = options.pinned;
  setup.wait = options.wait;
  setup.repeat = options.repeat;
  setup.transports = options.transports;
  setup.clock_read_ns = clock_read_cost_ns();
  setup.spin = spin_step();
  return setup;
}

namespace {

using Json = nlohmann::ordered_json;

std::string human_ns(std::int64_t ns) {
  if (ns >= 1'000'000) return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  if (ns >= 10'000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  return fmt::format("{} ns", ns);
}

std::string human_rate(double v) {
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

std::string ratio(double value, double ferry) {
  if (value <= 0 || ferry <= 0) return "n/a";
  const double r = value / ferry;
  return r >= 10 ? fmt::format("x {:.0f}", r) : fmt::format("x {:.2f}", r);
}

Json machine_json(const Machine& m) {
  return Json{{"cpu", m.cpu},
              {"cores", m.cores},
              {"kernel", m.kernel},
              {"clocksource", m.clocksource},
              {"compiler", m.compiler}};
}

void header(std::FILE* out, const RunSetup& s, const std::string& title, const std::string& roles) {
  fmt::print(out, "{}\n", title);
  fmt::print(out, "machine: {}\n", to_string(s.machine));
  fmt::print(out, "setup:   {}; private domain {}; clock read {} ns; spin step {} ns ({} pauses)\n",
             roles, s.domain, s.clock_read_ns, s.spin.ns, s.spin.pauses);
  for (std::size_t t = 0; t < s.transports.size(); ++t) {
    fmt::print(out, "  {:<12} {}\n", s.transports[t], s.described[t]);
  }
}

std::string cpu_roles(const RunSetup& s, const char* first, const char* rest) {
  if (!s.pinned) {
    return fmt::format("{} and {} not pinned (the scheduler places them; --cpus A,B pins them)",
                       first, rest);
  }
  const std::vector<int>& cpus = s.cpus;
  std::string others;
  for (std::size_t i = 1; i < cpus.size(); ++i)
    others += fmt::format("{}{}", i > 1 ? "," : "", cpus[i]);
  return fmt::format("{} on CPU {}, {} on CPU {}", first, cpus.empty() ? -1 : cpus[0], rest,
                     others);
}

std::size_t index_of(const RunSetup& s, std::string_view name) {
  for (std::size_t t = 0; t < s.transports.size(); ++t) {
    if (s.transports[t] == name) return t;
  }
  return s.transports.size();
}
std::size_t ferry_index(const RunSetup& s) { return index_of(s, kFerry); }

// The CPUs as the JSON gives them: empty when no side was pinned.
std::vector<int> json_cpus(const RunSetup& s) { return s.pinned ? s.cpus : std::vector<int>{}; }

// [min, median, max] of one percentile over the repeats.
Json spread_json(const Spread& sp) {
  return Json{{"p50_ns", {sp.min.p50, sp.median.p50, sp.max.p50}},
              {"p90_ns", {sp.min.p90, sp.median.p90, sp.max.p90}},
              {"p99_ns", {sp.min.p99, sp.median.p99, sp.max.p99}},
              {"p999_ns", {sp.min.p999, sp.median.p999, sp.max.p999}},
              {"max_ns", {sp.min.max, sp.median.max, sp.max.max}}};
}

// The median p50 of a row's cell `t`, 0 when it has none.
std::int64_t p50_of(const std::vector<LatencyCell>& row, std::size_t t) {
  return t < row.size() && !row[t].runs.empty() ? median_of(row[t].one_ways()).p50 : 0;
}

// The median over the repeats of cell a's p50 / cell b's p50 in the same
// repeat (their runs were next to each other), 0 when no repeat has both.
// Robust where the machine's speed drifts between repeats, which moves a
// ratio of medians when the two medians come from different repeats.
template <class Cell, class Value>
double paired_ratio(const Cell& a, const Cell& b, Value value) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    for (std::size_t j = 0; j < b.runs.size(); ++j) {
      const double below = value(b.runs[j]);
      if (a.runs[i].repeat != b.runs[j].repeat || below <= 0) continue;
      ratios.push_back(value(a.runs[i]) / below);
    }
  }
  return ratios.empty() ? 0.0 : median(ratios);
}
double paired_p50_ratio(const LatencyCell& a, const LatencyCell& b) {
  return paired_ratio(a, b, [](const LatencyRun& r) { return static_cast<double>(r.one_way.p50); });
}
double paired_rate_ratio(const std::vector<ThroughputCell>& row, std::size_t a, std::size_t b) {
  if (a >= row.size() || b >= row.size()) return 0.0;
  return paired_ratio(row[a], row[b], [](const ThroughputRun& r) { return r.msgs_per_s; });
}
double paired_p50_ratio(const std::vector<LatencyCell>& row, std::size_t a, std::size_t b) {
  return a < row.size() && b < row.size() ? paired_p50_ratio(row[a], row[b]) : 0.0;
}
Json ratio_json(double r) { return r > 0 ? Json(r) : Json(); }
// A ratio already divided (paired_*_ratio), as ratio() prints it: n/a when there is none.
std::string ratio_text(double r) { return ratio(r, 1.0); }

std::string range_ns(const Spread& sp) {
  return sp.min.p50 == sp.max.p50
             ? human_ns(sp.min.p50)
             : fmt::format("{}-{}", human_ns(sp.min.p50), human_ns(sp.max.p50));
}

}  // namespace

std::vector<Percentiles> LatencyCell::one_ways() const {
  std::vector<Percentiles> out;
  out.reserve(runs.size());
  for (const LatencyRun& r : runs) out.push_back(r.one_way);
  return out;
}

std::string size_label(std::uint64_t bytes) { return config::format_size(bytes); }

void print_latency(std::FILE* out, const RunSetup& s, const LatencyTable& table, bool json) {
  const std::size_t fi = ferry_index(s);
  const std::size_t floor_i = index_of(s, kCacheline);
  if (json) {
    for (std::size_t i = 0; i < table.sizes.size(); ++i) {
      Json results = Json::array();
      const auto& row = table.cells[i];
      const Percentiles ferry =
          fi < row.size() && !row[fi].runs.empty() ? median_of(row[fi].one_ways()) : Percentiles{};
      const std::int64_t floor = p50_of(row, floor_i);
      for (std::size_t t = 0; t < row.size(); ++t) {
        if (row[t].runs.empty()) continue;  // every run failed: reported on stderr
        const Percentiles m = median_of(row[t].one_ways());
        results.push_back(Json{
            {"transport", s.transports[t]},
            {"p50_ns", m.p50},
            {"p90_ns", m.p90},
            {"p99_ns", m.p99},
            {"p999_ns", m.p999},
            {"max_ns", m.max},
            {"samples", m.samples},
            {"runs", row[t].runs.size()},
            {"failed_runs", row[t].failed.count},
            {"p50_vs_ferry",
             ferry.p50 > 0 ? static_cast<double>(m.p50) / static_cast<double>(ferry.p50) : 0.0},
            {"p50_vs_floor",
             floor > 0 ? Json(static_cast<double>(m.p50) / static_cast<double>(floor)) : Json()},
            {"p50_vs_ferry_paired", ratio_json(paired_p50_ratio(row, t, fi))},
            {"p50_vs_floor_paired", ratio_json(paired_p50_ratio(row, t, floor_i))},
            {"spread", spread_json(spread_of(row[t].one_ways()))}});
      }
      const Json line{{"kind", "latency"},
                      {"size", table.sizes[i]},
                      {"rounds", table.rounds[i]},
                      {"results", results},
                      {"floor_p50_ns", floor > 0 ? Json(floor) : Json()},
                      {"wait", std::string(to_string(s.wait))},
                      {"repeat", s.repeat},
                      {"pinned", s.pinned},
                      {"cpus", json_cpus(s)},
                      {"domain", s.domain},
                      {"clock_read_ns", s.clock_read_ns},
                      {"spin_step_ns", s.spin.ns},
                      {"spin_pauses", s.spin.pauses},
                      {"machine", machine_json(s.machine)}};
      fmt::print(out, "{}\n", line.dump());
    }
    return;
  }
  header(out, s,
         fmt::format("ferry bench latency: one-way latency = round trip / 2, --wait {}, {} "
                     "interleaved repeats "
                     "(medians shown, and the p50's range over them)",
                     to_string(s.wait), s.repeat),
         cpu_roles(s, "ping", "echo"));
  for (std::size_t i = 0; i < table.sizes.size(); ++i) {
    const auto& row = table.cells[i];
    const Percentiles ferry =
        fi < row.size() && !row[fi].runs.empty() ? median_of(row[fi].one_ways()) : Percentiles{};
    const std::int64_t floor = p50_of(row, floor_i);
    fmt::print(out, "\n{:<26} {:>9} {:>9} {:>9} {:>9} {:>9}  {:>18} {:>9} {:>9}\n",
               fmt::format("{} ({} rounds)", size_label(table.sizes[i]), table.rounds[i]), "p50",
               "p90", "p99", "p99.9", "max", "p50 range", "vs ferry", "vs floor");
    for (std::size_t t = 0; t < row.size(); ++t) {
      if (row[t].runs.empty()) {
        fmt::print(out, "  {:<24} every run FAILED (see below)\n", s.transports[t]);
        continue;
      }
      const Percentiles m = median_of(row[t].one_ways());
      const std::string note =
          row[t].failed.count > 0
              ? fmt::format("   ({} of {} runs failed)", row[t].failed.count,
                            row[t].failed.count + static_cast<int>(row[t].runs.size()))
              : "";
      fmt::print(out, "  {:<24} {:>9} {:>9} {:>9} {:>9} {:>9}  {:>18} {:>9} {:>9}{}\n",
                 s.transports[t], human_ns(m.p50), human_ns(m.p90), human_ns(m.p99),
                 human_ns(m.p999), human_ns(m.max), range_ns(spread_of(row[t].one_ways())),
                 ratio(static_cast<double>(m.p50), static_cast<double>(ferry.p50)),
                 ratio(static_cast<double>(m.p50), static_cast<double>(floor)), note);
    }
    // The same ratios within each repeat: what a drifting machine leaves of them.
    std::string pairs;
    for (std::size_t t = 0; t < row.size(); ++t) {
      const double vs_ferry = t == fi ? 0.0 : paired_p50_ratio(row, t, fi);
      const double vs_floor = t == floor_i ? 0.0 : paired_p50_ratio(row, t, floor_i);
      if (vs_ferry <= 0 && vs_floor <= 0) continue;
      pairs += fmt::format("{}{} {}", pairs.empty() ? "" : "; ", s.transports[t],
                           vs_ferry > 0 ? ratio_text(vs_ferry) + " ferry" : "");
      if (vs_floor > 0)
        pairs += fmt::format("{}{} floor", vs_ferry > 0 ? ", " : "", ratio_text(vs_floor));
    }
    if (!pairs.empty() && s.repeat > 1)
      fmt::print(out, "  within each repeat (median of the repeats' ratios): {}\n", pairs);
  }
  if (floor_i == s.transports.size()) {
    fmt::print(out,
               "\n(vs floor: n/a; add cacheline to --transports for the floor of a cross-core "
               "hand-off)\n");
  }
  // ferry's promise: a large sample costs what a small one does. The raw
  // ring passing a reference shows what of the growth the hardware makes
  // (the payload's line follows the slot's).
  if (fi < s.transports.size() && table.sizes.size() > 1) {
    std::size_t lo = 0, hi = 0;
    for (std::size_t i = 0; i < table.sizes.size(); ++i) {
      if (table.sizes[i] < table.sizes[lo]) lo = i;
      if (table.sizes[i] > table.sizes[hi]) hi = i;
    }
    std::string lines;
    for (const std::size_t t : {fi, index_of(s, kRawRing)}) {
      if (t >= s.transports.size()) continue;
      const auto a = table.cells[lo][t].one_ways();
      const auto b = table.cells[hi][t].one_ways();
      if (a.empty() || b.empty()) continue;
      const std::int64_t p_lo = median_of(a).p50;
      const std::int64_t p_hi = median_of(b).p50;
      lines += fmt::format("{} p50 at {} is {} its p50 at {} ({} vs {}; {} within each repeat)\n",
                           s.transports[t], size_label(table.sizes[hi]),
                           ratio(static_cast<double>(p_hi), static_cast<double>(p_lo)),
                           size_label(table.sizes[lo]), human_ns(p_hi), human_ns(p_lo),
                           ratio_text(paired_p50_ratio(table.cells[hi][t], table.cells[lo][t])));
    }
    // The floor of that promise: a reference whose holder is recorded as a
    // pool must (raw-ring-owned), against ferry's own small sample.
    if (const std::size_t t = index_of(s, kRawRingOwned); t < s.transports.size()) {
      const auto a = table.cells[lo][fi].one_ways();
      const auto b = table.cells[hi][t].one_ways();
      if (!a.empty() && !b.empty()) {
        const std::int64_t p_lo = median_of(a).p50;
        const std::int64_t p_hi = median_of(b).p50;
        lines +=
            fmt::format("{} p50 at {} is {} ferry's p50 at {} ({} vs {}; {} within each repeat)\n",
                        s.transports[t], size_label(table.sizes[hi]),
                        ratio(static_cast<double>(p_hi), static_cast<double>(p_lo)),
                        size_label(table.sizes[lo]), human_ns(p_hi), human_ns(p_lo),
                        ratio_text(paired_p50_ratio(table.cells[hi][t], table.cells[lo][fi])));
      }
    }
    if (!lines.empty()) fmt::print(out, "\n{}", lines);
  }
  fmt::print(out,
             "\n(each sample includes one clock read; a run stops measuring after its time budget, "
             "so large sizes "
             "may have fewer samples than rounds)\n");
}

void print_throughput(std::FILE* out, const RunSetup& s, const ThroughputTable& table, bool json) {
  const std::size_t fi = ferry_index(s);
  auto medians = [](const ThroughputCell& c) {
    std::vector<double> m, total;
    std::uint64_t errors = 0;
    for (const auto& r : c.runs) {
      m.push_back(r.msgs_per_s);
      total.push_back(r.total_msgs_per_s);
      errors += r.errors;
    }
    return ThroughputRun{
        .msgs_per_s = median(m), .total_msgs_per_s = median(total), .errors = errors};
  };
  auto rate_range = [](const ThroughputCell& c) {
    double lo = 0, hi = 0;
    for (std::size_t r = 0; r < c.runs.size(); ++r) {
      const double v = c.runs[r].msgs_per_s;
      lo = r == 0 ? v : std::min(lo, v);
      hi = r == 0 ? v : std::max(hi, v);
    }
    return std::pair{lo, hi};
  };
  if (json) {
    for (std::size_t i = 0; i < table.sizes.size(); ++i) {
      const auto& row = table.cells[i];
      const double ferry =
          fi < row.size() && !row[fi].runs.empty() ? medians(row[fi]).msgs_per_s : 0.0;
      Json results = Json::array();
      for (std::size_t t = 0; t < row.size(); ++t) {
        if (row[t].runs.empty()) continue;
        const ThroughputRun m = medians(row[t]);
        results.push_back(Json{{"transport", s.transports[t]},
                               {"msgs_per_s", m.msgs_per_s},
                               {"bytes_per_s", m.msgs_per_s * static_cast<double>(table.sizes[i])},
                               {"total_msgs_per_s", m.total_msgs_per_s},
                               {"sequence_errors", m.errors},
                               {"runs", row[t].runs.size()},
                               {"failed_runs", row[t].failed.count},
                               {"vs_ferry", ferry > 0 ? m.msgs_per_s / ferry : 0.0},
                               {"vs_ferry_paired", ratio_json(paired_rate_ratio(row, t, fi))},
                               {"spread", Json{{"msgs_per_s",
                                                {rate_range(row[t]).first, m.msgs_per_s,
                                                 rate_range(row[t]).second}}}}});
      }
      const Json line{{"kind", "throughput"},
                      {"size", table.sizes[i]},
                      {"seconds", table.seconds},
                      {"results", results},
                      {"subscribers", table.subscribers},
                      {"batch", table.batch},
                      {"wait", std::string(to_string(s.wait))},
                      {"repeat", s.repeat},
                      {"pinned", s.pinned},
                      {"cpus", json_cpus(s)},
                      {"domain", s.domain},
                      {"machine", machine_json(s.machine)}};
      fmt::print(out, "{}\n", line.dump());
    }
    return;
  }
  header(out, s,
         fmt::format(
             "ferry bench throughput: one publisher, {} subscriber{}, {} s per run, --wait {}, {} "
             "interleaved repeats (medians shown, and their range){}",
             table.subscribers, table.subscribers == 1 ? "" : "s", table.seconds, to_string(s.wait),
             s.repeat,
             table.batch == 1
                 ? std::string()
                 : fmt::format(", batches of {} (ferry, ferry-loan, raw-ring)", table.batch)),
         cpu_roles(s, "publisher", "subscribers"));
  for (std::size_t i = 0; i < table.sizes.size(); ++i) {
    const auto& row = table.cells[i];
    const double ferry =
        fi < row.size() && !row[fi].runs.empty() ? medians(row[fi]).msgs_per_s : 0.0;
    fmt::print(out, "\n{:<26} {:>12} {:>11} {:>10} {:>12} {:>18}\n", size_label(table.sizes[i]),
               table.subscribers == 1 ? "msgs/s" : "msgs/s each", "MB/s", "vs ferry", "seq errors",
               "msgs/s range");
    for (std::size_t t = 0; t < row.size(); ++t) {
      if (row[t].runs.empty()) {
        fmt::print(out, "  {:<24} every run FAILED (see below)\n", s.transports[t]);
        continue;
      }
      const ThroughputRun m = medians(row[t]);
      const auto [lo, hi] = rate_range(row[t]);
      fmt::print(
          out, "  {:<24} {:>12} {:>11.1f} {:>10} {:>12} {:>18}{}\n", s.transports[t],
          human_rate(m.msgs_per_s), m.msgs_per_s * static_cast<double>(table.sizes[i]) / 1e6,
          ratio(m.msgs_per_s, ferry), m.errors,
          fmt::format("{}-{}", human_rate(lo), human_rate(hi)),
          row[t].failed.count > 0 ? fmt::format("   ({} runs failed)", row[t].failed.count) : "");
    }
    // vs ferry within each repeat: what a drifting machine leaves of it.
    std::string pairs;
    for (std::size_t t = 0; t < row.size(); ++t) {
      const double r = t == fi ? 0.0 : paired_rate_ratio(row, t, fi);
      if (r > 0)
        pairs += fmt::format("{}{} {}", pairs.empty() ? "" : "; ", s.transports[t], ratio_text(r));
    }
    if (!pairs.empty() && s.repeat > 1)
      fmt::print(out, "  vs ferry within each repeat (median of the repeats' ratios): {}\n", pairs);
  }
  fmt::print(
      out,
      "\n(msgs/s: what every subscriber received, from the slowest one; the receivers check every "
      "sequence number; policy block, so nothing is dropped)\n");
}

int print_failures(std::FILE* err, const RunSetup& s, const std::vector<std::uint64_t>& sizes,
                   const std::vector<std::vector<Failures>>& failures) {
  int total = 0;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    for (std::size_t t = 0; t < failures[i].size(); ++t) {
      const Failures& f = failures[i][t];
      if (f.count == 0) continue;
      total += f.count;
      fmt::print(err, "ferry bench: {} at {}: {} run{} failed; first: {}\n", s.transports[t],
                 size_label(sizes[i]), f.count, f.count == 1 ? "" : "s", f.first);
    }
  }
  return total;
}

}  // namespace ferry::bench
