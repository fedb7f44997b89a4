// ferry bench in a build configured with FERRY_BUILD_BENCH=OFF (the demo's
// and the sanitizer builds of scripts/): the verbs and their flags parse as
// usual, and running one says that the measurements were left out.
#include <string>

#include "commands.hpp"

namespace ferry::cli {

namespace {

[[noreturn]] void left_out() {
  throw Failure(kExitRuntime,
                "this ferry was built without its benchmarks (FERRY_BUILD_BENCH=OFF); "
                "scripts/build.sh builds them (cmake -DFERRY_BUILD_BENCH=ON)");
}

}  // namespace

std::string bench_transports_help() {
  return "Transports to measure (this ferry was built without its benchmarks: "
         "FERRY_BUILD_BENCH=OFF)";
}

int run_bench_latency(const BenchLatencyOptions&, const Context&) { left_out(); }
int run_bench_rpc(const BenchRpcOptions&, const Context&) { left_out(); }
int run_bench_throughput(const BenchThroughputOptions&, const Context&) { left_out(); }
int run_bench_scale(const BenchScaleOptions&, const Context&) { left_out(); }
int run_bench_fanout(const BenchFanoutOptions&, const Context&) { left_out(); }

}  // namespace ferry::cli
