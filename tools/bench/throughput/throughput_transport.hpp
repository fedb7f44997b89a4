#pragma once
// One transport of `ferry bench throughput`: one sender streaming numbered
// messages to `receivers` receivers as fast as they take them. The
// orchestrator calls prepare() and after_spawn()/finish(); send() and
// receive() run in the forked sides.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ferry/bench/options.hpp"
#include "harness/run_control.hpp"
#include "harness/run_plan.hpp"

namespace ferry::bench {

class PrivateDomain;

struct ThroughputPlan : RunPlan {
  std::uint64_t size = 0;
  std::int64_t warmup_ns = 0;   // sent before the receivers start counting
  std::int64_t measure_ns = 0;  // then this long
  std::uint32_t receivers = 1;
  std::uint32_t batch = 1;  // messages per batch where the transport has batches
};

class ThroughputTransport {
 public:
  virtual ~ThroughputTransport() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual std::string describe(Wait wait) const = 0;
  virtual void prepare(const ThroughputPlan& /*plan*/) {}
  virtual void after_spawn() {}
  virtual void finish() {}
  virtual int send(const ThroughputPlan& plan, RunControl& control) = 0;
  virtual int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) = 0;
};

// ferry: the copy path up to the inline limit, the loan path above.
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_ferry_throughput();
// One path at every size, reported as `name`.
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_ferry_copy_throughput(
    std::string_view name = kFerryCopy);
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_ferry_loan_throughput(
    std::string_view name = kFerryLoan);
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_raw_ring_throughput();
// The floor: messages straight into a ring of cache lines (up to 4 KiB, polled).
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_cacheline_throughput();
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_unix_socket_throughput();
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_pipe_throughput();
// Defined only when iceoryx was built (FERRY_BENCH_HAVE_ICEORYX).
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_iceoryx_throughput();
// Defined only when Fast DDS / Cyclone DDS were built.
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_fastdds_throughput();
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_cyclonedds_throughput();
[[nodiscard]] std::unique_ptr<ThroughputTransport> make_throughput_transport(std::string_view name);

}  // namespace ferry::bench
