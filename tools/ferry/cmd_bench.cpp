// ferry bench latency|throughput|scale|fanout: runs the verbs from their
// flags; the measuring is in tools/bench (library ferry_bench).
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ferry/bench/bench.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/units.hpp"

namespace ferry::cli {

namespace {

template <class Options>
void fill_common(Options& o, const BenchCommonOptions& a) {
  o.sizes = bench::parse_sizes(a.sizes);
  o.transports = bench::parse_transports(a.transports);
  o.cpus = bench::parse_cpus(a.cpus);
  o.wait = bench::parse_wait(a.wait);
  o.repeat = a.repeat;
  o.json = a.json;
}

// Runs a verb: usage errors exit 2, a run that could not start 1, failed
// runs 1 (after the results), an interrupt 130.
template <class Run>
void run_verb(const Context& context, Run&& run) {
  // A benchmark measures in a domain of its own; silently ignoring --domain
  // would let a user believe the numbers came from theirs.
  if (context.domain_given) {
    throw Failure(
        kExitUsage,
        "ferry bench starts its own ferryd in a private domain, so --domain does not apply; "
        "run it without --domain");
  }
  int code = 0;
  try {
    code = run();
  } catch (const bench::UsageError& e) {
    throw Failure(kExitUsage, e.what());
  } catch (const std::exception& e) {
    throw Failure(kExitRuntime, e.what());
  }
  if (code == bench::kExitInterrupted) {
    throw Failure(
        code, "interrupted; every process and shared-memory object of the benchmark was removed");
  }
  if (code != 0) throw Failure(code, "some runs failed (see above); their results are left out");
}

}  // namespace

std::string bench_transports_help() {
  const std::string inline_max = config::format_size(config::kMaxInlineSample);
  return fmt::format(
      "Transports to measure, in a list: ferry, ferry-copy, ferry-loan, ferry-waitset, "
      "ferry-fd, ferry-c, ferry-image, raw-ring, raw-ring-owned, cacheline, unix-socket, pipe, "
      "iceoryx, fastdds, "
      "cyclonedds "
      "(default "
      "ferry, raw-ring, unix-socket, pipe and iceoryx; latency adds cacheline). ferry is "
      "what the full API gives at each size: publish(const T&) / take() up to {0} (copied "
      "into the ring slot and out), loan / publish / take above (zero copy); ferry-copy "
      "is publish(const T&) at every size (above {0} copied once into a pool chunk), "
      "ferry-loan the loan path at every size; ferry-waitset and ferry-fd (latency only) "
      "are "
      "ferry-copy waiting in WaitSet::wait() or in poll() on WaitSet::fd() with --wait "
      "sleep; ferry-c (latency only) is ferry-copy with the ping side through the C API; "
      "ferry-image (latency only) is ferry-loan with a sensor_msgs/msg/Image holding the "
      "message in its data sequence (docs/messages.md); "
      "raw-ring-owned (latency only) is raw-ring passing a reference to one buffer whose "
      "owner word four CASes move (claim, hand-over, accept, release), the floor of a "
      "zero-copy hand-off that records its holder; "
      "cacheline is the floor: for latency one cache line passed between the two sides, a "
      "cross-core hand-off that latency reports compare every transport with; for "
      "throughput (--wait spin, up to 4 KiB) messages written straight into a ring of cache "
      "lines, a stream with nothing but the messages' own lines; "
      "iceoryx is iceoryx 2.x loan / publish "
      "through a RouDi of its own ({1}); fastdds is Fast DDS with loans, data-sharing for "
      "latency and its shared-memory transport for throughput ({2}); cyclonedds is Cyclone "
      "DDS over loopback ({3}); see docs/benchmarks.md",
      inline_max,
      bench::iceoryx_built() ? "built in" : "not built in: install libiceoryx-posh-dev and rebuild",
      bench::fastdds_built() ? "built in" : "left out: install libfastrtps-dev and rebuild",
      bench::cyclonedds_built() ? "built in"
                                : "left out: install cyclonedds-dev, cyclonedds-tools and rebuild");
}

int run_bench_latency(const BenchLatencyOptions& a, const Context& context) {
  run_verb(context, [&] {
    bench::LatencyOptions o;
    fill_common(o, a.common);
    o.rounds = a.rounds;
    o.max_run_seconds = a.max_run_seconds;
    return bench::run_latency(std::move(o), stdout);
  });
  return kExitOk;
}

int run_bench_rpc(const BenchRpcOptions& a, const Context& context) {
  run_verb(context, [&] {
    bench::RpcOptions o;
    o.rounds = a.rounds;
    o.repeat = a.repeat;
    o.cpus = bench::parse_cpus(a.cpus);
    o.json = a.json;
    return bench::run_rpc(o, stdout);
  });
  return kExitOk;
}

int run_bench_throughput(const BenchThroughputOptions& a, const Context& context) {
  run_verb(context, [&] {
    bench::ThroughputOptions o;
    fill_common(o, a.common);
    o.seconds = a.seconds;
    o.subscribers = a.subscribers;
    o.batch = a.batch;
    return bench::run_throughput(std::move(o), stdout);
  });
  return kExitOk;
}

int run_bench_scale(const BenchScaleOptions& a, const Context& context) {
  run_verb(context, [&] {
    bench::ScaleOptions o;
    o.nodes = a.nodes;
    o.topics = a.topics;
    o.idle_seconds = a.idle_seconds;
    o.traffic_seconds = a.traffic_seconds;
    o.rate_hz = a.rate_hz;
    o.repeat = a.repeat;
    o.json = a.json;
    return bench::run_scale(o, stdout);
  });
  return kExitOk;
}

int run_bench_fanout(const BenchFanoutOptions& a, const Context& context) {
  run_verb(context, [&] {
    bench::FanoutOptions o;
    o.subscribers = bench::parse_counts(a.subscribers);
    o.transports = bench::parse_transports(a.transports);
    o.samples = a.samples;
    o.gap_us = a.gap_us;
    o.repeat = a.repeat;
    o.json = a.json;
    return bench::run_fanout(o, stdout);
  });
  return kExitOk;
}

}  // namespace ferry::cli
