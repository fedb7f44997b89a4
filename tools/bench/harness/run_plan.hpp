#pragma once
// What every run of a two-sided bench kind (latency, throughput) tells its
// transport besides the kind's own figures; interleave_runs() fills it in.

#include <cstdint>
#include <span>

#include "ferry/bench/options.hpp"

namespace ferry::bench {

class PrivateDomain;

struct RunPlan {
  Wait wait = Wait::Spin;
  std::uint64_t run = 0;  // index of this run (picks the topic slot)
  int repeat = 0;         // the repeat it belongs to: runs of one repeat ran next to each other
  const PrivateDomain* domain = nullptr;
  // Every size of this invocation: a comparator sizes its daemon for all at once.
  std::span<const std::uint64_t> all_sizes;
};

}  // namespace ferry::bench
