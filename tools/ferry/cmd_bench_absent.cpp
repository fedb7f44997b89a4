// ferry bench in a build configured with FERRY_BUILD_BENCH=OFF (the
// sanitizer passes of scripts/test.sh): the verbs and their flags parse as
// usual, and running one says that the measurements were left out.
#include <string>

#include "commands.hpp"

namespace ferry::cli {

namespace {

[[noreturn]] void left_out() {
  throw Failure(kExitRuntime,
                "this ferry was built without its benchmarks (FERRY_BUILD_BENCH=OFF); configure "
                "with -DFERRY_BUILD_BENCH=ON to run ferry bench");
}

}  // namespace

std::string bench_transports_help() {
  return "Transports to measure (this ferry was built without its benchmarks: "
         "FERRY_BUILD_BENCH=OFF)";
}

int run_bench_latency(const BenchLatencyOptions&, const Context&) { left_out(); }
int run_bench_throughput(const BenchThroughputOptions&, const Context&) { left_out(); }
int run_bench_scale(const BenchScaleOptions&, const Context&) { left_out(); }
int run_bench_fanout(const BenchFanoutOptions&, const Context&) { left_out(); }

}  // namespace ferry::cli
