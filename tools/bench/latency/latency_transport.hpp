#pragma once
// One transport of `ferry bench latency`: how its two sides set up, ping and
// echo. The orchestrator calls prepare() and after_spawn()/finish() in its
// own process; ping() and echo() run in the two forked sides.

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

struct LatencyPlan : RunPlan {
  std::uint64_t size = 0;
  std::uint64_t rounds = 0;         // measured round trips (at most)
  std::uint64_t warmup = 0;         // round trips before measuring
  std::int64_t max_measure_ns = 0;  // measuring stops after this long
};

// The sequence number that tells the echo side to stop.
inline constexpr std::uint64_t kStopSeq = ~std::uint64_t{0};
// How long a side waits for its peer's next message before it gives up.
inline constexpr std::int64_t kPeerTimeoutNs = 5'000'000'000;

class LatencyTransport {
 public:
  virtual ~LatencyTransport() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  // One line for the header: what a message goes through.
  [[nodiscard]] virtual std::string describe(Wait wait) const = 0;
  virtual void prepare(const LatencyPlan& /*plan*/) {}
  virtual void after_spawn() {}  // e.g. close the orchestrator's copies of descriptors
  virtual void finish() {}
  // The sides' exit codes: 0 success, else failure (reported in the control block).
  virtual int ping(const LatencyPlan& plan, RunControl& control) = 0;
  virtual int echo(const LatencyPlan& plan, RunControl& control) = 0;
};

// ferry: the copy path up to the inline limit, the loan path above.
[[nodiscard]] std::unique_ptr<LatencyTransport> make_ferry_latency();
// How a ferry side waits for its next sample when it sleeps.
enum class FerryWake : std::uint8_t { Take, WaitSet, Fd };
// One path at every size, reported as `name`.
[[nodiscard]] std::unique_ptr<LatencyTransport> make_ferry_copy_latency(
    std::string_view name = kFerryCopy, FerryWake wake = FerryWake::Take);
[[nodiscard]] std::unique_ptr<LatencyTransport> make_ferry_loan_latency(
    std::string_view name = kFerryLoan);
// ferry-image: ferry-loan with a sensor_msgs/msg/Image.
[[nodiscard]] std::unique_ptr<LatencyTransport> make_ferry_image_latency();
// ferry-copy with the ping side through the C API (transports/ferry_c/).
[[nodiscard]] std::unique_ptr<LatencyTransport> make_ferry_c_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_raw_ring_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_raw_ring_owned_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_unix_socket_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_pipe_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_cacheline_latency();
// Defined only when iceoryx was built (FERRY_BENCH_HAVE_ICEORYX).
[[nodiscard]] std::unique_ptr<LatencyTransport> make_iceoryx_latency();
// Defined only when Fast DDS / Cyclone DDS were built (FERRY_BENCH_HAVE_FASTDDS,
// FERRY_BENCH_HAVE_CYCLONEDDS).
[[nodiscard]] std::unique_ptr<LatencyTransport> make_fastdds_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_cyclonedds_latency();
[[nodiscard]] std::unique_ptr<LatencyTransport> make_latency_transport(std::string_view name);

}  // namespace ferry::bench
