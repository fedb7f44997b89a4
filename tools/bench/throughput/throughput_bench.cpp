// `ferry bench throughput`: for every repeat, every size, every transport
// (interleaved), one run: a sender and K receivers forked and pinned,
// streaming for --seconds after a short warm-up.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ferry/bench/bench.hpp"
#include "ferry/bench/clock.hpp"
#include "harness/bench_config.hpp"
#include "harness/interleave.hpp"
#include "harness/private_domain.hpp"
#include "harness/processes.hpp"
#include "harness/report.hpp"
#include "harness/run_control.hpp"
#include "harness/signals.hpp"
#include "throughput/throughput_transport.hpp"

namespace ferry::bench {

int run_throughput(ThroughputOptions o, std::FILE* out) {
  finalize(o);
  SignalScope signals;
  RunSetup setup = describe_run(o);

  std::vector<std::unique_ptr<ThroughputTransport>> transports;
  for (const auto& name : o.transports) {
    transports.push_back(make_throughput_transport(name));
    if (!transports.back()) {
      throw UsageError(
          fmt::format("transport '{}' measures latency only (ferry bench latency)", name));
    }
    setup.described.push_back(transports.back()->describe(o.wait));
  }

  SharedControl control;
  PrivateDomain domain;
  setup.domain = domain.name();
  const auto sets =
      ferry_topic_sets(o.transports, o.sizes, [&](std::uint64_t size, FerryPath path) {
        return throughput_topics(size, o.subscribers, path, o.batch);
      });
  if (!sets.empty()) domain.start_daemon(bench_yaml(sets));

  ThroughputTable table;
  table.sizes = o.sizes;
  table.seconds = o.seconds;
  table.subscribers = o.subscribers;
  table.batch = o.batch;
  table.cells.assign(o.sizes.size(), std::vector<ThroughputCell>(transports.size()));

  const auto measure_ns = static_cast<std::int64_t>(o.seconds * 1e9);
  const std::int64_t warmup_ns = std::clamp<std::int64_t>(measure_ns / 5, 20'000'000, 300'000'000);
  const std::int64_t budget_ns = 20'000'000'000 + 2 * (measure_ns + warmup_ns);
  const bool finished = interleave_runs(
      o.repeat, o.sizes, o.wait, transports, signals, domain, !o.json,
      [&](std::size_t i, std::size_t t, const RunPlan& run) {
        ThroughputTransport& tr = *transports[t];
        ThroughputPlan plan{run};
        plan.size = o.sizes[i];
        plan.warmup_ns = warmup_ns;
        plan.measure_ns = measure_ns;
        plan.receivers = o.subscribers;
        plan.batch = o.batch;

        ThroughputCell& cell = table.cells[i][t];
        return run_sides(
            tr, plan, control, signals, budget_ns, cell.failed,
            [&](ChildGroup& group) {
              for (std::uint32_t k = 0; k < o.subscribers; ++k) {
                group.spawn(o.cpus[1 + k], [&, k] { return tr.receive(plan, control.get(), k); });
              }
              group.spawn(o.cpus[0], [&] { return tr.send(plan, control.get()); });
            },
            [&] {
              ThroughputRun result;
              result.msgs_per_s = std::numeric_limits<double>::max();
              for (std::uint32_t k = 0; k < o.subscribers; ++k) {
                const ReceiverOutcome& rx = control.get().receivers[k];
                if (rx.ok == 0) return false;
                const double rate =
                    static_cast<double>(rx.messages) * 1e9 / static_cast<double>(rx.elapsed_ns);
                result.msgs_per_s = std::min(result.msgs_per_s, rate);
                result.total_msgs_per_s += rate;
                result.errors += rx.errors;
              }
              result.repeat = run.repeat;
              cell.runs.push_back(result);
              return true;
            });
      });
  if (!finished) return kExitInterrupted;

  print_throughput(out, setup, table, o.json);
  std::fflush(out);
  int code = print_failures(stderr, setup, o.sizes, failures_of(table.cells)) == 0 ? 0 : 1;
  // A lossless transport that lost or reordered a message is a failure too.
  for (std::size_t i = 0; i < o.sizes.size(); ++i) {
    for (std::size_t t = 0; t < transports.size(); ++t) {
      std::uint64_t errors = 0;
      for (const auto& r : table.cells[i][t].runs) errors += r.errors;
      if (errors != 0) {
        fmt::print(
            stderr,
            "ferry bench: {} at {}: {} messages out of sequence (lost, repeated or reordered)\n",
            o.transports[t], size_label(o.sizes[i]), errors);
        code = 1;
      }
    }
  }
  return code;
}

}  // namespace ferry::bench
