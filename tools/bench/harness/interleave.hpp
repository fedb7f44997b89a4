#pragma once
// The order every two-sided bench kind (latency, throughput) runs in: for
// every repeat, every size, every transport, so that the machine's drift
// hits all transports alike; and how one of those runs goes.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/options.hpp"
#include "harness/private_domain.hpp"
#include "harness/processes.hpp"
#include "harness/progress.hpp"
#include "harness/report.hpp"
#include "harness/run_control.hpp"
#include "harness/run_plan.hpp"
#include "harness/signals.hpp"

namespace ferry::bench {

// Calls run(size_index, transport_index, plan) for each run in that order,
// `plan` numbering the runs (waiting as `wait`, in `domain`), showing which
// on the progress line (when `show_progress`) and checking the private
// ferryd before a ferry transport's run. `run` returns false when it was
// interrupted. Returns false when interrupted (a signal, or `run`), true
// when every run ran.
template <class Transport, class Run>
[[nodiscard]] bool interleave_runs(int repeat, const std::vector<std::uint64_t>& sizes, Wait wait,
                                   const std::vector<std::unique_ptr<Transport>>& transports,
                                   SignalScope& signals, PrivateDomain& domain, bool show_progress,
                                   Run&& run) {
  Progress progress(show_progress);
  RunPlan plan{.wait = wait, .run = 0, .domain = &domain, .all_sizes = sizes};
  for (int r = 0; r < repeat; ++r) {
    plan.repeat = r;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (std::size_t t = 0; t < transports.size(); ++t) {
        if (signals.interrupted()) return false;
        const auto& name = transports[t]->name();
        progress.show(
            fmt::format("  repeat {}/{}: {} at {}", r + 1, repeat, name, size_label(sizes[i])));
        if (is_ferry(name)) domain.check_daemon();
        if (!run(i, t, std::as_const(plan))) return false;
        ++plan.run;
      }
    }
  }
  return true;
}

// One run: `control` reset, the transport prepared with `plan`, its sides
// forked by `spawn(group)` and waited for until `budget_ns` from now, the
// transport finished. When every side exited 0, `measured()` keeps what the
// run measured (read from `control`) and says whether it measured anything;
// otherwise, or when it did not, the run's failure goes to `failed`.
// Returns false when interrupted.
template <class Transport, class Plan, class Spawn, class Measured>
[[nodiscard]] bool run_sides(Transport& transport, const Plan& plan, SharedControl& control,
                             SignalScope& signals, std::int64_t budget_ns, Failures& failed,
                             Spawn&& spawn, Measured&& measured) {
  control.reset();
  transport.prepare(plan);
  ChildGroup group(signals);
  spawn(group);
  transport.after_spawn();
  const auto outcome = group.wait_all(now_ns() + budget_ns);
  transport.finish();
  if (outcome == ChildGroup::Outcome::Interrupted) return false;
  bool ok = outcome == ChildGroup::Outcome::AllExited;
  for (const auto& c : group.children()) ok = ok && c.code == 0;
  if (!ok || !measured()) {
    failed.add(group_failure(
        group, outcome, control.error(),
        fmt::format("did not finish within {} s (stopped)", budget_ns / 1'000'000'000)));
  }
  return true;
}

// Each cell's failures, by size then transport, as print_failures takes them.
template <class Cell>
[[nodiscard]] std::vector<std::vector<Failures>> failures_of(
    const std::vector<std::vector<Cell>>& cells) {
  std::vector<std::vector<Failures>> failures(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    for (const auto& cell : cells[i]) failures[i].push_back(cell.failed);
  }
  return failures;
}

}  // namespace ferry::bench
