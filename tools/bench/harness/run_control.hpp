#pragma once
// The control block the sides of a run share with the orchestrator: a start
// barrier, the outcomes, and the first error. It lives in an anonymous shared
// mapping made before any fork, so every child sees the same one.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/bench/options.hpp"
#include "ferry/bench/percentiles.hpp"

namespace ferry::bench {

// What the pinger of a latency run found.
struct LatencyOutcome {
  Percentiles one_way;
  std::uint32_t ok = 0;
};

// What one receiver of a throughput run counted over its measured window.
struct ReceiverOutcome {
  std::uint64_t messages = 0;  // received in the window (sentinel excluded)
  std::int64_t elapsed_ns = 0;
  std::uint64_t errors = 0;  // sequence numbers out of order or missing, bad sizes
  std::uint32_t ok = 0;
};

struct alignas(64) RunControl {
  std::atomic<std::uint32_t> ready{0};     // sides set up and waiting at the barrier
  std::atomic<std::uint32_t> finished{0};  // receiving sides that saw the stop message
  std::atomic<std::uint32_t> error_claimed{0};
  std::atomic<std::uint32_t> error_written{0};  // `error` is complete
  LatencyOutcome latency{};
  ReceiverOutcome receivers[kMaxSubscribers]{};
  char error[480]{};  // the first error a side reported, NUL-terminated
};

class SharedControl {
 public:
  SharedControl();  // throws std::runtime_error when mmap fails
  ~SharedControl();
  SharedControl(const SharedControl&) = delete;
  SharedControl& operator=(const SharedControl&) = delete;

  [[nodiscard]] RunControl& get() const noexcept { return *control_; }
  // Before each run (no child alive).
  void reset() noexcept;
  [[nodiscard]] std::string error() const { return error_of(*control_); }
  // The first error reported in `control` (any RunControl, also one embedded elsewhere).
  [[nodiscard]] static std::string error_of(const RunControl& control);

 private:
  RunControl* control_ = nullptr;
};

// In a side: records `what` unless another side reported first.
void report_error(RunControl& control, std::string_view what) noexcept;
// The same for a side that could not set itself up: returns its exit code, 2.
inline int setup_failed(RunControl& control, std::string_view what) noexcept {
  report_error(control, what);
  return 2;
}

// In a side: joins the start barrier and waits (spinning, then yielding)
// until `parties` sides have joined. False after `timeout_ns`.
bool start_barrier(RunControl& control, std::uint32_t parties, std::int64_t timeout_ns) noexcept;

// A receiving side saw the stop message: its sender may now go away.
void mark_finished(RunControl& control) noexcept;
// In the sending side: waits (yielding) until `parties` receivers marked
// themselves finished, so that leaving does not take their last message
// away. False after `timeout_ns`.
bool wait_finished(RunControl& control, std::uint32_t parties, std::int64_t timeout_ns) noexcept;

}  // namespace ferry::bench
