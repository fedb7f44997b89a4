#include "scale/scale_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace ferry::bench {

namespace {

using Json = nlohmann::ordered_json;

// The targets of issue 17 for 100 nodes x 10 topics.
constexpr double kMatchTargetMs = 1000;
constexpr double kIdleCpuTargetPercent = 0.5;
constexpr std::uint64_t kRssTargetBytes = 50ull << 20;

template <class F>
auto median_by(const std::vector<ScaleRun>& runs, F&& field) {
  using T = decltype(field(runs.front()));
  std::vector<T> v;
  for (const auto& r : runs) v.push_back(field(r));
  return median(v);
}

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }
double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

void print_scale(std::FILE* out, const ScaleReport& r) {
  const ScaleOptions& o = r.options;
  const std::uint64_t queues = std::uint64_t{o.nodes} * o.topics;
  if (r.runs.empty()) {
    if (o.json) {
      fmt::print(out, "{}\n",
                 Json{{"bench", "scale"},
                      {"domain", r.domain},
                      {"nodes", o.nodes},
                      {"topics", o.topics},
                      {"all_matched", false},
                      {"runs", 0}}
                     .dump());
    }
    return;
  }
  const auto& runs = r.runs;
  bool all_matched = true;
  for (const auto& run : runs) all_matched = all_matched && run.all_matched;
  const auto match_ns =
      median_by(runs, [](const ScaleRun& x) { return x.match_after_last_port_ns; });
  const auto setup_ns = median_by(runs, [](const ScaleRun& x) { return x.setup_ns; });
  const auto setup_cpu = median_by(runs, [](const ScaleRun& x) { return x.ferryd_setup_cpu_ns; });
  const auto idle = median_by(runs, [](const ScaleRun& x) { return x.ferryd_idle_cpu_percent; });
  const auto nodes_idle =
      median_by(runs, [](const ScaleRun& x) { return x.nodes_idle_cpu_percent; });
  const auto traffic =
      median_by(runs, [](const ScaleRun& x) { return x.ferryd_traffic_cpu_percent; });
  const auto rss = median_by(runs, [](const ScaleRun& x) { return x.ferryd_rss_bytes; });
  const auto node_rss = median_by(runs, [](const ScaleRun& x) { return x.node_rss_median_bytes; });
  const auto node_rss_max = median_by(runs, [](const ScaleRun& x) { return x.node_rss_max_bytes; });
  std::vector<Percentiles> lat;
  for (const auto& run : runs) lat.push_back(run.latency);
  const Percentiles latency = median_of(lat);
  const DomainShm& shm = runs.front().shm;
  const std::uint64_t per_queue = shm.rings != 0 ? shm.ring_bytes / shm.rings : 0;
  const std::uint64_t per_bell = shm.doorbells != 0 ? shm.doorbell_bytes / shm.doorbells : 0;

  if (o.json) {
    Json j{{"bench", "scale"},
           {"domain", r.domain},
           {"nodes", o.nodes},
           {"topics", o.topics},
           {"ports", 2 * queues},
           {"queues", queues},
           {"repeat", o.repeat},
           {"runs", runs.size()},
           {"all_matched", all_matched},
           {"match_after_last_port_ms", ms(match_ns)},
           {"setup_ms", ms(setup_ns)},
           {"ferryd_setup_cpu_ms", ms(setup_cpu)},
           {"ferryd_idle_cpu_percent", idle},
           {"ferryd_traffic_cpu_percent", traffic},
           {"ferryd_rss_bytes", rss},
           {"nodes_idle_cpu_percent", nodes_idle},
           {"node_rss_median_bytes", node_rss},
           {"node_rss_max_bytes", node_rss_max},
           {"shm",
            {{"rings", shm.rings},
             {"bytes_per_queue", per_queue},
             {"doorbells", shm.doorbells},
             {"bytes_per_doorbell", per_bell},
             {"registry_bytes", shm.registry_bytes},
             {"pool_bytes", shm.pool_bytes},
             {"other_bytes", shm.other_bytes}}},
           {"latency_64b",
            {{"p50_ns", latency.p50},
             {"p90_ns", latency.p90},
             {"p99_ns", latency.p99},
             {"max_ns", latency.max},
             {"samples", latency.samples}}},
           {"rate_hz", o.rate_hz},
           {"idle_seconds", o.idle_seconds},
           {"traffic_seconds", o.traffic_seconds},
           {"machine", Json{{"cpu", r.machine.cpu},
                            {"cores", r.machine.cores},
                            {"kernel", r.machine.kernel},
                            {"compiler", r.machine.compiler}}}};
    fmt::print(out, "{}\n", j.dump());
    return;
  }
  const auto verdict = [](bool ok) { return ok ? "ok" : "MISSED"; };
  fmt::print(out, "ferry bench scale: {} nodes x {} topics ({} ports, {} queues)\n", o.nodes,
             o.topics, 2 * queues, queues);
  fmt::print(out, "machine: {}\n", to_string(r.machine));
  fmt::print(out,
             "setup:   each node publishes {} topics and subscribes to the next node's; private "
             "domain {}; medians of {} run(s)\n\n",
             o.topics, r.domain, runs.size());
  fmt::print(out, "  every pair matched        {}\n", all_matched ? "yes" : "NO");
  fmt::print(out, "  matched after last port   {:.1f} ms   (target < {:.0f} ms: {})\n",
             ms(match_ns), kMatchTargetMs, verdict(ms(match_ns) < kMatchTargetMs));
  fmt::print(out, "  first fork to all matched {:.1f} ms   (ferryd CPU meanwhile {:.1f} ms)\n",
             ms(setup_ns), ms(setup_cpu));
  fmt::print(out,
             "  ferryd CPU, idle          {:.3f} % of a core over {:g} s   (target < {:g} %: {})\n",
             idle, o.idle_seconds, kIdleCpuTargetPercent, verdict(idle < kIdleCpuTargetPercent));
  fmt::print(out, "  ferryd CPU, traffic       {:.3f} % of a core\n", traffic);
  fmt::print(out, "  ferryd RSS                {:.1f} MiB   (target < {:.0f} MiB: {})\n", mib(rss),
             mib(kRssTargetBytes), verdict(rss < kRssTargetBytes));
  fmt::print(out, "  nodes' CPU, idle          {:.3f} % of a core, all {} together\n", nodes_idle,
             o.nodes);
  fmt::print(out, "  node RSS                  {:.1f} MiB median, {:.1f} MiB max\n", mib(node_rss),
             mib(node_rss_max));
  fmt::print(out,
             "  shared memory             {} B per queue (ring), {} B per subscriber (doorbell), "
             "{:.1f} MiB heartbeat table, {:.1f} MiB pool\n",
             per_queue, per_bell, mib(shm.registry_bytes), mib(shm.pool_bytes));
  fmt::print(out,
             "  64 B publish -> take      p50 {:.1f} us, p90 {:.1f} us, p99 {:.1f} us ({} samples; "
             "every node publishing {} Hz, subscribers asleep in a WaitSet)\n",
             static_cast<double>(latency.p50) / 1e3, static_cast<double>(latency.p90) / 1e3,
             static_cast<double>(latency.p99) / 1e3, latency.samples, o.rate_hz);
}

}  // namespace ferry::bench
