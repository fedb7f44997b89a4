#pragma once
// What the node processes of `ferry bench scale` share with the
// orchestrator: the phase they are in (a futex word: nodes sleep on it, so
// that waiting adds no CPU to what is measured), when each created its last
// port and saw its last match, and the latencies it sampled. One anonymous
// shared mapping made before the fork, sized for the run's node count.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "harness/run_control.hpp"

namespace ferry::bench {

enum class ScalePhase : std::uint32_t { Setup = 0, Traffic = 1, Stop = 2 };

// Latencies one node keeps (the first ones after the warm-up).
inline constexpr std::uint32_t kScaleLatencySlots = 1024;

struct alignas(64) ScaleNodeSlot {
  std::atomic<std::int64_t> ports_created_ns{0};  // now_ns() after its last port was created
  std::atomic<std::int64_t> matched_ns{0};        // now_ns() when every port of it was matched
  std::atomic<std::uint32_t> latency_count{0};
  std::int64_t latency_ns[kScaleLatencySlots]{};  // publish -> take, 64 B, the subscriber asleep
};

struct alignas(64) ScaleHeader {
  std::atomic<std::uint32_t> phase{0};  // ScalePhase; a futex word
  std::atomic<std::uint32_t> matched_nodes{0};
  std::atomic<std::int64_t> traffic_start_ns{0};
  RunControl control;  // the first error a node reported
};

class ScaleShared {
 public:
  explicit ScaleShared(std::uint32_t nodes);  // throws std::runtime_error when mmap fails
  ~ScaleShared();
  ScaleShared(const ScaleShared&) = delete;
  ScaleShared& operator=(const ScaleShared&) = delete;

  [[nodiscard]] ScaleHeader& header() const noexcept { return *header_; }
  [[nodiscard]] ScaleNodeSlot& node(std::uint32_t k) const noexcept { return slots_[k]; }

  // The orchestrator: moves every node to `phase` and wakes them.
  void set_phase(ScalePhase phase) noexcept;
  // A node: sleeps until the phase is at least `phase`.
  void wait_phase(ScalePhase phase) const noexcept;
  [[nodiscard]] ScalePhase phase() const noexcept;

 private:
  std::size_t bytes_ = 0;
  ScaleHeader* header_ = nullptr;
  ScaleNodeSlot* slots_ = nullptr;
  std::uint32_t nodes_ = 0;
};

}  // namespace ferry::bench
