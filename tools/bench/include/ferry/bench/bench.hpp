#pragma once
// `ferry bench latency` and `ferry bench throughput`: ferry against the
// transport ring alone, a Unix socket, a pipe, the optional iceoryx, Fast
// DDS and Cyclone DDS comparators and the cache-line floor, measured in one
// run with interleaved repetitions, each side in its own process (pinned
// with --cpus), against a private ferryd started (and stopped) for the run
// (docs/benchmarks.md).

#include <cstdio>

#include "ferry/bench/options.hpp"

namespace ferry::bench {

// Exit codes: 0 every run succeeded; 1 some run failed (its results are
// left out, the reason printed to stderr); 130 interrupted (SIGINT/SIGTERM:
// everything started was stopped and removed). Throws UsageError for bad
// options, std::runtime_error when the run cannot start (no ferryd, ...).
int run_latency(LatencyOptions options, std::FILE* out);
int run_throughput(ThroughputOptions options, std::FILE* out);
int run_scale(ScaleOptions options, std::FILE* out);
int run_fanout(FanoutOptions options, std::FILE* out);
int run_rpc(const RpcOptions& options, std::FILE* out);  // rpc/rpc_bench.cpp

inline constexpr int kExitInterrupted = 130;

}  // namespace ferry::bench
