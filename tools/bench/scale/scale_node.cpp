#include "scale/scale_node.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/ferry.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

namespace {

// The 64-byte sample: when it was published (now_ns(), one clock for every
// process of the machine) and padding.
struct ScaleSample {
  std::int64_t stamp_ns;
  std::uint8_t pad[56];
};
static_assert(sizeof(ScaleSample) == 64);

// Every port matched: one subscriber on each topic of ours, one publisher on
// each topic we follow.
bool all_matched(const std::vector<ferry::Publisher<ScaleSample>>& pubs,
                 const std::vector<ferry::Subscriber<ScaleSample>>& subs) {
  for (const auto& p : pubs) {
    if (p.subscriber_count() != 1) return false;
  }
  for (const auto& s : subs) {
    if (s.publisher_count() != 1) return false;
  }
  return true;
}

constexpr std::int64_t kMatchTimeoutNs = 120'000'000'000;

}  // namespace

}  // namespace ferry::bench

FERRY_TYPE_NAMED(ferry::bench::ScaleSample, "bench/Scale64");

namespace ferry::bench {

std::string scale_topic(std::uint32_t node, std::uint32_t topic) {
  return fmt::format("scale/n{}/t{}", node, topic);
}

std::string scale_yaml(std::uint32_t nodes, std::uint32_t topics) {
  // heartbeat_ms and timeout_ms as shipped (100, 1000): the cost measured
  // is the one a user gets. Capacity 16: a sample a period, queues never fill.
  return fmt::format(
      "# Written by `ferry bench scale` for its private ferryd; removed when the run ends.\n"
      "liveness: {{ heartbeat_ms: 100, timeout_ms: 1000 }}\n"
      "limits: {{ max_topics: {}, max_ports_per_node: {} }}\n"
      "defaults: {{ capacity: 16, policy: drop_oldest }}\n",
      std::uint64_t{nodes} * topics + 16, 2 * topics + 8);
}

int scale_node(const ScalePlan& plan, ScaleShared& shared, std::uint32_t index) {
  RunControl& control = shared.header().control;
  const std::string who = fmt::format("node {}", index);
  ferry::Node node = join_domain(*plan.domain, fmt::format("scale{}", index), Wait::Sleep);
  std::vector<ferry::Publisher<ScaleSample>> pubs;
  std::vector<ferry::Subscriber<ScaleSample>> subs;
  pubs.reserve(plan.topics);
  subs.reserve(plan.topics);
  for (std::uint32_t j = 0; j < plan.topics; ++j) {
    pubs.push_back(node.publisher<ScaleSample>(scale_topic(index, j)));
  }
  const std::uint32_t next = (index + 1) % plan.nodes;
  for (std::uint32_t j = 0; j < plan.topics; ++j) {
    subs.push_back(node.subscriber<ScaleSample>(scale_topic(next, j)));
  }
  ScaleNodeSlot& slot = shared.node(index);
  // SYNC: relaxed; read by the orchestrator after matched_nodes (release below).
  slot.ports_created_ns.store(now_ns(), std::memory_order_relaxed);

  const std::int64_t deadline = now_ns() + kMatchTimeoutNs;
  while (!all_matched(pubs, subs)) {
    if (now_ns() > deadline) {
      report_error(control, who + ": ferryd did not match every port within 120 s");
      return 2;
    }
    // 1 ms: the resolution of the match time; N processes polling must not
    // starve ferryd on a small machine.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  slot.matched_ns.store(now_ns(), std::memory_order_relaxed);  // SYNC: relaxed, as above
  // SYNC: release, pairs with the orchestrator's acquire load of the count.
  shared.header().matched_nodes.fetch_add(1, std::memory_order_release);

  shared.wait_phase(ScalePhase::Traffic);
  ferry::WaitSet waits;
  for (auto& s : subs) waits.attach(s);
  // SYNC: relaxed; written before set_phase's release, read after its acquire.
  const std::int64_t start = shared.header().traffic_start_ns.load(std::memory_order_relaxed);
  const std::int64_t period = 1'000'000'000 / plan.rate_hz;
  // Spread the nodes over the period, so that they do not all publish at once.
  std::int64_t next_publish = start + period * index / plan.nodes;
  std::uint64_t tick = 0;
  std::uint32_t kept = 0;
  ScaleSample sample{};
  while (shared.phase() == ScalePhase::Traffic) {
    std::int64_t now = now_ns();
    if (now >= next_publish) {
      sample.stamp_ns = now;
      (void)pubs[tick % plan.topics].publish(sample);
      ++tick;
      next_publish += period;
      if (next_publish < now) next_publish = now + period;  // we were late: no burst
      continue;
    }
    // Until the next publish, at most 50 ms (the stop phase is noticed then).
    const auto ready = waits.wait(
        std::chrono::nanoseconds(std::min<std::int64_t>(next_publish - now, 50'000'000)));
    for (std::size_t i : ready) {
      while (auto s = subs[i].take()) {
        const std::int64_t taken = now_ns();
        if ((*s)->stamp_ns >= start + plan.warmup_ns && kept < kScaleLatencySlots) {
          slot.latency_ns[kept++] = taken - (*s)->stamp_ns;
        }
      }
    }
  }
  // SYNC: release, pairs with the orchestrator's acquire after the nodes exited.
  slot.latency_count.store(kept, std::memory_order_release);
  return 0;
}

}  // namespace ferry::bench
