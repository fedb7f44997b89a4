// `ferry bench latency`: for every repeat, every size, every transport (in
// that order, so that the machine's drift hits them all alike), one run: a
// ping side and an echo side forked, pinned to two CPUs, ping-ponging.
#include <fmt/format.h>

#include "ferry/bench/bench.hpp"
#include "ferry/bench/clock.hpp"
#include "harness/bench_config.hpp"
#include "harness/interleave.hpp"
#include "harness/private_domain.hpp"
#include "harness/processes.hpp"
#include "harness/report.hpp"
#include "harness/run_control.hpp"
#include "harness/signals.hpp"
#include "latency/latency_transport.hpp"

namespace ferry::bench {

int run_latency(LatencyOptions o, std::FILE* out) {
  finalize(o);
  SignalScope signals;  // before any child: they must not inherit a half-set mask
  RunSetup setup = describe_run(o);

  std::vector<std::unique_ptr<LatencyTransport>> transports;
  for (const auto& name : o.transports) {
    transports.push_back(make_latency_transport(name));
    setup.described.push_back(transports.back()->describe(o.wait));
  }

  SharedControl control;
  PrivateDomain domain;
  setup.domain = domain.name();
  const auto sets = ferry_topic_sets(o.transports, o.sizes, [](std::uint64_t size, FerryPath path) {
    return latency_topics(size, path);
  });
  if (!sets.empty()) domain.start_daemon(bench_yaml(sets));

  LatencyTable table;
  table.sizes = o.sizes;
  for (auto size : o.sizes) table.rounds.push_back(o.rounds != 0 ? o.rounds : auto_rounds(size));
  table.cells.assign(o.sizes.size(), std::vector<LatencyCell>(transports.size()));

  const auto max_measure_ns = static_cast<std::int64_t>(o.max_run_seconds * 1e9);
  // Setting up (ferryd matching the ports), warm-up, measuring, stopping.
  const std::int64_t budget_ns = 20'000'000'000 + 2 * max_measure_ns;
  const bool finished =
      interleave_runs(o.repeat, o.sizes, o.wait, transports, signals, domain, !o.json,
                      [&](std::size_t i, std::size_t t, const RunPlan& run) {
                        LatencyTransport& tr = *transports[t];
                        LatencyPlan plan{run};
                        plan.size = o.sizes[i];
                        plan.rounds = table.rounds[i];
                        plan.warmup = std::max<std::uint64_t>(100, plan.rounds / 10);
                        plan.max_measure_ns = max_measure_ns;

                        LatencyCell& cell = table.cells[i][t];
                        return run_sides(
                            tr, plan, control, signals, budget_ns, cell.failed,
                            [&](ChildGroup& group) {
                              group.spawn(o.cpus[1], [&] { return tr.echo(plan, control.get()); });
                              group.spawn(o.cpus[0], [&] { return tr.ping(plan, control.get()); });
                            },
                            [&] {
                              if (control.get().latency.ok == 0) return false;
                              cell.runs.push_back({run.repeat, control.get().latency.one_way});
                              return true;
                            });
                      });
  if (!finished) return kExitInterrupted;  // the destructors stop and remove everything

  print_latency(out, setup, table, o.json);
  std::fflush(out);
  return print_failures(stderr, setup, o.sizes, failures_of(table.cells)) == 0 ? 0 : 1;
}

}  // namespace ferry::bench
