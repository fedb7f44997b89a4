#pragma once
// One node process of `ferry bench scale`: publishes the M topics of its
// own, subscribes to the M topics of the next node, reports when its ports
// were created and matched, then (in the traffic phase) publishes round its
// topics at the plan's rate and sleeps in a WaitSet between, timing every
// sample it takes.

#include <cstdint>
#include <string>

#include "scale/scale_shared.hpp"

namespace ferry::bench {

class PrivateDomain;

struct ScalePlan {
  std::uint32_t nodes = 0;
  std::uint32_t topics = 0;
  std::uint32_t rate_hz = 0;
  std::int64_t warmup_ns = 0;  // of the traffic phase, not sampled
  const PrivateDomain* domain = nullptr;
};

// "scale/n<node>/t<topic>".
[[nodiscard]] std::string scale_topic(std::uint32_t node, std::uint32_t topic);

// The YAML of a scale run: undeclared topics (typed by their first port),
// limits that admit N x M topics and 2 x M ports per node.
[[nodiscard]] std::string scale_yaml(std::uint32_t nodes, std::uint32_t topics);

// The body of node `index`; its exit code (0, or non-zero with an error
// reported in the header's RunControl).
int scale_node(const ScalePlan& plan, ScaleShared& shared, std::uint32_t index);

}  // namespace ferry::bench
