#pragma once
// ferry-bench-ring's results: the medians over the repeats, printed as a
// table or as one JSON document (--json).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ferry/bench/machine.hpp"
#include "measure.hpp"
#include "options.hpp"

namespace ferry::bench_ring {

// What the runs gave: one row per transport that ran, in run order, and
// the two rows every ratio is taken against.
struct Summary {
  struct ThroughputRow {
    std::string transport;  // the --only name, "transport" in JSON
    std::string label;      // the table's description
    double msgs_per_s = 0;  // medians over the runs that succeeded
    double seconds = 0;
    int failed_runs = 0;
  };
  struct LatencyRow {
    std::string transport;
    std::string label;
    Latency median;  // each percentile's median over the runs that succeeded
    int failed_runs = 0;
  };

  bench::Machine machine;
  bool pinned = false;
  std::int64_t clock_read_ns = 0;
  int failed_runs = 0;
  std::vector<ThroughputRow> throughput;
  std::vector<LatencyRow> latency;
  // The spinning ring and the Unix socket, 0 when they did not run (--only):
  // the ratios and the targets are taken from these.
  double ring_msgs_per_s = 0;
  double ring_seconds = 0;
  std::int64_t ring_p50_ns = 0;
  double socket_msgs_per_s = 0;
  std::int64_t socket_p50_ns = 0;
};

// The table's heading: machine and setup, printed before the runs start.
void print_heading(const Options& opt, const Summary& s);

// The table: throughput, then latency, then whether the targets were met.
void print_table(const Options& opt, const Summary& s);

// The --json document. Its keys (machine, cpus, pinned, repeat, slot_size,
// capacity, spin_limit, clock_read_ns, failed_runs, throughput{size,
// seconds, results[]}, latency{size, rounds, sleep_rounds, results[]}) are
// what scripts read: add keys, do not rename them.
[[nodiscard]] nlohmann::ordered_json to_json(const Options& opt, const Summary& s);

}  // namespace ferry::bench_ring
