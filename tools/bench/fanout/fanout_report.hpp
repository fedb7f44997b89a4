#pragma once
// `ferry bench fanout`'s results: per K and transport, the runs' p50s of
// the publisher's cost and of the first and last subscriber's wake-up;
// shown as medians over the runs (a table, or one JSON object per K).

#include <cstdio>
#include <string>
#include <vector>

#include "ferry/bench/machine.hpp"
#include "ferry/bench/options.hpp"
#include "ferry/bench/percentiles.hpp"
#include "harness/report.hpp"  // Failures

namespace ferry::bench {

struct FanoutRun {
  Percentiles publish;     // the publish call (for all K), ns
  Percentiles first_wake;  // publish start -> the first subscriber has the sample
  Percentiles last_wake;   // ... the last one has it
};
struct FanoutCell {
  std::vector<FanoutRun> runs;
  Failures failed;
};
struct FanoutReport {
  FanoutOptions options;
  Machine machine;
  std::string domain;
  std::vector<std::string> described;          // per transport
  std::vector<std::vector<FanoutCell>> cells;  // [K index][transport]
};

void print_fanout(std::FILE* out, const FanoutReport& report);

}  // namespace ferry::bench
