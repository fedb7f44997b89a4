// `ferry bench scale`: for each repetition, a private ferryd and N node
// processes (scale_node.cpp). Measured from here, from /proc: how long after
// the last port's creation every pair was matched, ferryd's CPU while the
// nodes only beat (idle) and while they publish, ferryd's and the nodes'
// resident memory, the domain's shared memory per queue; the nodes sample a
// 64 B publish -> take latency while every node publishes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "ferry/bench/bench.hpp"
#include "ferry/bench/clock.hpp"
#include "harness/private_domain.hpp"
#include "harness/proc_stats.hpp"
#include "harness/processes.hpp"
#include "harness/progress.hpp"
#include "harness/signals.hpp"
#include "scale/scale_node.hpp"
#include "scale/scale_report.hpp"
#include "scale/scale_shared.hpp"

namespace ferry::bench {

namespace {

constexpr std::int64_t kSetupTimeoutNs = 180'000'000'000;
constexpr std::int64_t kTrafficWarmupNs = 200'000'000;

// Sleeps `ns` unless interrupted; false when interrupted.
bool pause(SignalScope& signals, std::int64_t ns) {
  const std::int64_t end = now_ns() + ns;
  for (std::int64_t left = ns; left > 0; left = end - now_ns()) {
    if (signals.interrupted()) return false;
    signals.wait(std::chrono::milliseconds(std::min<std::int64_t>(left / 1'000'000 + 1, 100)));
  }
  return !signals.interrupted();
}

// CPU of `pids` together, in ns (processes that are gone count nothing).
std::int64_t cpu_of(const std::vector<pid_t>& pids) {
  std::int64_t total = 0;
  for (pid_t p : pids) total += cpu_time_ns(p).value_or(0);
  return total;
}

double percent(std::int64_t cpu_ns, std::int64_t wall_ns) {
  return wall_ns > 0 ? 100.0 * static_cast<double>(cpu_ns) / static_cast<double>(wall_ns) : 0;
}

enum class RunEnd : std::uint8_t { Done, Failed, Interrupted };

RunEnd run_once(const ScaleOptions& o, SignalScope& signals, ScaleRun& result, std::string& why,
                std::string& domain_name) {
  ScaleShared shared(o.nodes);
  PrivateDomain domain;
  domain_name = domain.name();
  domain.start_daemon(scale_yaml(o.nodes, o.topics));
  const pid_t ferryd = domain.daemon_pid();

  ScalePlan plan;
  plan.nodes = o.nodes;
  plan.topics = o.topics;
  plan.rate_hz = o.rate_hz;
  plan.warmup_ns = kTrafficWarmupNs;
  plan.domain = &domain;

  const std::int64_t cpu_before = cpu_time_ns(ferryd).value_or(0);
  const std::int64_t start = now_ns();
  ChildGroup group(signals);
  std::vector<pid_t> nodes;
  // Not pinned: N processes share the machine's CPUs as a real system's would.
  for (std::uint32_t k = 0; k < o.nodes; ++k) {
    nodes.push_back(group.spawn(-1, [&, k] { return scale_node(plan, shared, k); }));
  }

  // Every node matched, or a failure.
  for (;;) {
    // SYNC: acquire, pairs with each node's release increment: its slot's
    // times are visible.
    if (shared.header().matched_nodes.load(std::memory_order_acquire) == o.nodes) break;
    if (signals.interrupted()) return RunEnd::Interrupted;
    why = SharedControl::error_of(shared.header().control);
    if (!why.empty()) return RunEnd::Failed;
    for (pid_t p : nodes) {
      int code = -1;
      if (!child_running(p, &code)) {
        why = fmt::format("a node exited with code {} before every port was matched", code);
        return RunEnd::Failed;
      }
    }
    if (now_ns() - start > kSetupTimeoutNs) {
      why = "not every port was matched within 180 s";
      return RunEnd::Failed;
    }
    domain.check_daemon();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::int64_t last_port = 0;
  std::int64_t last_match = 0;
  for (std::uint32_t k = 0; k < o.nodes; ++k) {
    // SYNC: relaxed; ordered by the acquire load of matched_nodes above.
    last_port =
        std::max(last_port, shared.node(k).ports_created_ns.load(std::memory_order_relaxed));
    last_match = std::max(last_match, shared.node(k).matched_ns.load(std::memory_order_relaxed));
  }
  result.all_matched = true;
  result.match_after_last_port_ns = std::max<std::int64_t>(0, last_match - last_port);
  result.setup_ns = last_match - start;
  result.ferryd_setup_cpu_ns = cpu_time_ns(ferryd).value_or(0) - cpu_before;

  // Idle: every node only beats (its runtime thread), ferryd only watches.
  if (!pause(signals, 300'000'000)) return RunEnd::Interrupted;  // the last replies settle
  const auto idle_ns = static_cast<std::int64_t>(o.idle_seconds * 1e9);
  const std::int64_t idle_start = now_ns();
  const std::int64_t ferryd_idle0 = cpu_time_ns(ferryd).value_or(0);
  const std::int64_t nodes_idle0 = cpu_of(nodes);
  if (!pause(signals, idle_ns)) return RunEnd::Interrupted;
  const std::int64_t idle_wall = now_ns() - idle_start;
  result.ferryd_idle_cpu_percent =
      percent(cpu_time_ns(ferryd).value_or(0) - ferryd_idle0, idle_wall);
  result.nodes_idle_cpu_percent = percent(cpu_of(nodes) - nodes_idle0, idle_wall);
  result.shm = domain_shm(domain.name());

  // Traffic: every node publishes; the latency is sampled by the subscribers.
  // SYNC: relaxed; published by set_phase's release.
  shared.header().traffic_start_ns.store(now_ns(), std::memory_order_relaxed);
  const std::int64_t traffic_start = now_ns();
  const std::int64_t ferryd_traffic0 = cpu_time_ns(ferryd).value_or(0);
  shared.set_phase(ScalePhase::Traffic);
  if (!pause(signals, static_cast<std::int64_t>(o.traffic_seconds * 1e9))) {
    return RunEnd::Interrupted;
  }
  result.ferryd_traffic_cpu_percent =
      percent(cpu_time_ns(ferryd).value_or(0) - ferryd_traffic0, now_ns() - traffic_start);
  result.ferryd_rss_bytes = rss_bytes(ferryd).value_or(0);
  std::vector<std::uint64_t> rss;
  for (pid_t p : nodes) rss.push_back(rss_bytes(p).value_or(0));
  std::sort(rss.begin(), rss.end());
  result.node_rss_median_bytes = rss[rss.size() / 2];
  result.node_rss_max_bytes = rss.back();

  shared.set_phase(ScalePhase::Stop);
  const auto outcome = group.wait_all(now_ns() + 30'000'000'000);
  if (outcome == ChildGroup::Outcome::Interrupted) return RunEnd::Interrupted;
  why = SharedControl::error_of(shared.header().control);
  if (outcome == ChildGroup::Outcome::TimedOut) why = "the nodes did not stop within 30 s";
  for (const auto& c : group.children()) {
    if (why.empty() && c.code != 0) why = fmt::format("a node exited with code {}", c.code);
  }
  if (!why.empty()) return RunEnd::Failed;

  std::vector<std::int64_t> samples;
  for (std::uint32_t k = 0; k < o.nodes; ++k) {
    ScaleNodeSlot& slot = shared.node(k);
    // SYNC: acquire, pairs with the node's release store of its count.
    const std::uint32_t n = slot.latency_count.load(std::memory_order_acquire);
    samples.insert(samples.end(), slot.latency_ns,
                   slot.latency_ns + std::min(n, kScaleLatencySlots));
  }
  result.latency = percentiles(samples);
  return RunEnd::Done;
}

}  // namespace

int run_scale(ScaleOptions o, std::FILE* out) {
  finalize(o);
  SignalScope signals;
  ScaleReport report;
  report.options = o;
  report.machine = describe_machine();
  Progress progress(!o.json);
  for (int r = 0; r < o.repeat; ++r) {
    progress.show(
        fmt::format("  run {}/{}: {} nodes x {} topics", r + 1, o.repeat, o.nodes, o.topics));
    ScaleRun run;
    std::string why;
    const RunEnd end = run_once(o, signals, run, why, report.domain);
    if (end == RunEnd::Interrupted) return kExitInterrupted;
    if (end == RunEnd::Failed) {
      report.failures.push_back(why);
    } else {
      report.runs.push_back(run);
    }
  }
  print_scale(out, report);
  std::fflush(out);
  for (const auto& why : report.failures)
    fmt::print(stderr, "ferry bench scale: a run failed: {}\n", why);
  return report.failures.empty() ? 0 : 1;
}

}  // namespace ferry::bench
