#pragma once
// `ferry bench scale`'s results: one ScaleRun per repetition, shown as
// medians (a table for people, one JSON object for programs).

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ferry/bench/machine.hpp"
#include "ferry/bench/options.hpp"
#include "ferry/bench/percentiles.hpp"
#include "harness/proc_stats.hpp"

namespace ferry::bench {

struct ScaleRun {
  bool all_matched = false;
  std::int64_t match_after_last_port_ns = 0;  // last match - last port's creation
  std::int64_t setup_ns = 0;                  // first fork -> every port matched
  std::int64_t ferryd_setup_cpu_ns = 0;       // ferryd's CPU during that setup
  double ferryd_idle_cpu_percent = 0;         // of one core, over the idle window
  double nodes_idle_cpu_percent = 0;          // every node's together, same window
  double ferryd_traffic_cpu_percent = 0;      // during the traffic phase
  std::uint64_t ferryd_rss_bytes = 0;         // at the end of the traffic phase
  std::uint64_t node_rss_median_bytes = 0;
  std::uint64_t node_rss_max_bytes = 0;
  DomainShm shm;
  Percentiles latency;  // 64 B publish -> take, sleeping subscribers
};

struct ScaleReport {
  ScaleOptions options;
  Machine machine;
  std::string domain;
  std::vector<ScaleRun> runs;
  std::vector<std::string> failures;
};

void print_scale(std::FILE* out, const ScaleReport& report);

}  // namespace ferry::bench
