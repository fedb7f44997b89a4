#pragma once
// Results as tables for people and as JSON (one object per line per size,
// the docs/cli/index.md shape plus extra keys).

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ferry/bench/machine.hpp"
#include "ferry/bench/options.hpp"
#include "ferry/bench/percentiles.hpp"

namespace ferry::bench {

// How a run was set up, for the header and the JSON.
struct RunSetup {
  Machine machine;
  std::vector<int> cpus;  // -1: that side not pinned
  bool pinned = false;    // --cpus given
  Wait wait = Wait::Spin;
  int repeat = 0;
  std::string domain;
  std::int64_t clock_read_ns = 0;
  SpinStep spin;                        // the spin loops' polling period
  std::vector<std::string> transports;  // names, in order
  std::vector<std::string> described;   // one line per transport
};

// What a run's header shows of the machine and the options (the domain and
// the transports' descriptions are added by the caller).
[[nodiscard]] RunSetup describe_run(const CommonOptions& options);

// Runs that failed for one cell, and why the first one did.
struct Failures {
  int count = 0;
  std::string first;
  void add(const std::string& why) {
    if (count++ == 0) first = why;
  }
};

struct LatencyRun {
  int repeat = 0;  // RunPlan::repeat
  Percentiles one_way;
};
struct LatencyCell {
  std::vector<LatencyRun> runs;  // successful runs only
  Failures failed;
  // Each run's one-way percentiles, in run order.
  [[nodiscard]] std::vector<Percentiles> one_ways() const;
};
struct LatencyTable {
  std::vector<std::uint64_t> sizes;
  std::vector<std::uint64_t> rounds;            // per size
  std::vector<std::vector<LatencyCell>> cells;  // [size][transport]
};

struct ThroughputRun {
  int repeat = 0;               // RunPlan::repeat
  double msgs_per_s = 0;        // the slowest receiver's rate: the stream every subscriber got
  double total_msgs_per_s = 0;  // summed over receivers
  std::uint64_t errors = 0;
};
struct ThroughputCell {
  std::vector<ThroughputRun> runs;  // successful runs only
  Failures failed;
};
struct ThroughputTable {
  std::vector<std::uint64_t> sizes;
  double seconds = 0;
  std::uint32_t subscribers = 1;
  std::uint32_t batch = 1;                         // --batch
  std::vector<std::vector<ThroughputCell>> cells;  // [size][transport]
};

void print_latency(std::FILE* out, const RunSetup& setup, const LatencyTable& table, bool json);
void print_throughput(std::FILE* out, const RunSetup& setup, const ThroughputTable& table,
                      bool json);
// One line per cell with failures, to stderr; returns how many runs failed.
int print_failures(std::FILE* err, const RunSetup& setup, const std::vector<std::uint64_t>& sizes,
                   const std::vector<std::vector<Failures>>& failures);

// "64 B", "4 KiB", "3110400 B".
[[nodiscard]] std::string size_label(std::uint64_t bytes);

}  // namespace ferry::bench
