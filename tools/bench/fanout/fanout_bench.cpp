// `ferry bench fanout`: for every repeat, every K, every transport
// (interleaved), one run: a publisher and K subscribers forked, the
// subscribers asleep between samples. Per sample: the publisher's cost
// (the publish call for all K), and when the first and the last
// subscriber had it; reported as p50s, medians over the repeats.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "fanout/fanout_report.hpp"
#include "fanout/fanout_transport.hpp"
#include "ferry/bench/bench.hpp"
#include "ferry/bench/clock.hpp"
#include "ferry/bench/machine.hpp"
#include "ferry/transport/pool_layout.hpp"
#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "harness/processes.hpp"
#include "harness/progress.hpp"
#include "harness/signals.hpp"

namespace ferry::bench {

namespace {

std::unique_ptr<FanoutTransport> make_fanout(std::string_view name) {
  if (name == kFerry) return make_ferry_fanout(false);
  if (name == kFerryLoan) return make_ferry_fanout(true);
  if (name == kUnixSocket) return make_unix_socket_fanout();
#ifdef FERRY_BENCH_HAVE_ICEORYX
  if (name == kIceoryx) return make_iceoryx_fanout();
#endif
  throw UsageError(fmt::format("transport '{}' has no fanout side", name));
}

// One run's p50s from the shared arrays.
FanoutRun summarize(const FanoutShared& shared) {
  const std::uint64_t n = shared.samples();
  std::vector<std::int64_t> cost(n), first(n), last(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    cost[i] = shared.publish_cost(i);
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    for (std::uint32_t k = 0; k < shared.subscribers(); ++k) {
      const std::int64_t wake = shared.woke(k, i) - shared.publish_start(i);
      lo = std::min(lo, wake);
      hi = std::max(hi, wake);
    }
    first[i] = lo;
    last[i] = hi;
  }
  FanoutRun run;
  run.publish = percentiles(cost);
  run.first_wake = percentiles(first);
  run.last_wake = percentiles(last);
  return run;
}

}  // namespace

int run_fanout(FanoutOptions o, std::FILE* out) {
  finalize(o);
  SignalScope signals;
  FanoutReport report;
  report.options = o;
  report.machine = describe_machine();
  std::vector<std::unique_ptr<FanoutTransport>> transports;
  for (const auto& name : o.transports) {
    transports.push_back(make_fanout(name));
    report.described.push_back(transports.back()->describe());
  }

  PrivateDomain domain;
  report.domain = domain.name();
  std::vector<TopicSet> sets;
  for (auto k : o.subscribers) {
    for (const auto& t : o.transports) {
      if (t != kFerry && t != kFerryLoan) continue;
      // Capacity 16: one sample is in flight; the pool holds what K queues can.
      sets.push_back(
          {BenchTopic{fanout_topic(k, t == kFerryLoan), kFanoutSize, t == kFerry, 16, k, 1}});
    }
  }
  if (!sets.empty()) domain.start_daemon(bench_yaml(sets));

  report.cells.assign(o.subscribers.size(), std::vector<FanoutCell>(transports.size()));
  Progress progress(!o.json);
  std::uint64_t run = 0;
  for (int r = 0; r < o.repeat; ++r) {
    for (std::size_t i = 0; i < o.subscribers.size(); ++i) {
      for (std::size_t t = 0; t < transports.size(); ++t) {
        if (signals.interrupted()) return kExitInterrupted;
        FanoutTransport& tr = *transports[t];
        progress.show(fmt::format("  repeat {}/{}: {} to {} subscriber(s)", r + 1, o.repeat,
                                  tr.name(), o.subscribers[i]));
        if (tr.name() == kFerry || tr.name() == kFerryLoan) domain.check_daemon();
        FanoutPlan plan;
        plan.subscribers = o.subscribers[i];
        plan.warmup = std::max<std::uint64_t>(20, o.samples / 10);
        plan.samples = o.samples;
        plan.gap_ns = o.gap_us * 1000;
        plan.run = run++;
        plan.domain = &domain;

        FanoutShared shared(plan.subscribers, plan.samples);
        tr.prepare(plan);
        const std::int64_t budget_ns =
            30'000'000'000 +
            static_cast<std::int64_t>(plan.warmup + plan.samples) * (plan.gap_ns + 2'000'000);
        ChildGroup group(signals);
        // Not pinned: K sleeping subscribers share the machine's CPUs.
        for (std::uint32_t k = 0; k < plan.subscribers; ++k) {
          group.spawn(-1, [&, k] { return tr.subscribe(plan, shared, k); });
        }
        group.spawn(-1, [&] { return tr.publish(plan, shared); });
        const auto outcome = group.wait_all(now_ns() + budget_ns);
        tr.finish();
        if (outcome == ChildGroup::Outcome::Interrupted) return kExitInterrupted;
        bool ok = outcome == ChildGroup::Outcome::AllExited;
        for (const auto& c : group.children()) ok = ok && c.code == 0;
        FanoutCell& cell = report.cells[i][t];
        if (ok) {
          cell.runs.push_back(summarize(shared));
        } else {
          cell.failed.add(group_failure(group, outcome, SharedControl::error_of(shared.control()),
                                        "did not finish in time (stopped)"));
        }
      }
    }
  }
  print_fanout(out, report);
  std::fflush(out);
  int code = 0;
  for (std::size_t i = 0; i < o.subscribers.size(); ++i) {
    for (std::size_t t = 0; t < transports.size(); ++t) {
      const Failures& f = report.cells[i][t].failed;
      if (f.count == 0) continue;
      fmt::print(stderr, "ferry bench fanout: {} to {} subscriber(s): {} run(s) failed: {}\n",
                 o.transports[t], o.subscribers[i], f.count, f.first);
      code = 1;
    }
  }
  return code;
}

}  // namespace ferry::bench
