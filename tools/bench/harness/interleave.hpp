#pragma once
// The order every two-sided bench kind (latency, throughput) runs in: for
// every repeat, every size, every transport, so that the machine's drift
// hits all transports alike.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ferry/bench/options.hpp"
#include "harness/private_domain.hpp"
#include "harness/progress.hpp"
#include "harness/report.hpp"
#include "harness/signals.hpp"

namespace ferry::bench {

// Calls run(size_index, transport_index) for each run in that order,
// showing which on the progress line (when `show_progress`) and checking
// the private ferryd before a ferry transport's run. `run` returns false
// when it was interrupted. Returns false when interrupted (a signal, or
// `run`), true when every run ran.
template <class Transport, class Run>
[[nodiscard]] bool interleave_runs(int repeat, const std::vector<std::uint64_t>& sizes,
                                   const std::vector<std::unique_ptr<Transport>>& transports,
                                   SignalScope& signals, PrivateDomain& domain, bool show_progress,
                                   Run&& run) {
  Progress progress(show_progress);
  for (int r = 0; r < repeat; ++r) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (std::size_t t = 0; t < transports.size(); ++t) {
        if (signals.interrupted()) return false;
        const auto& name = transports[t]->name();
        progress.show(
            fmt::format("  repeat {}/{}: {} at {}", r + 1, repeat, name, size_label(sizes[i])));
        if (is_ferry(name)) domain.check_daemon();
        if (!run(i, t)) return false;
      }
    }
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
