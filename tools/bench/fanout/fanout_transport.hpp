#pragma once
// One transport of `ferry bench fanout`: a publisher sending numbered 64 B
// samples to K subscribers that sleep between them. The orchestrator calls
// prepare()/finish(); publish() and subscribe() run in the forked sides and
// use the loops below, so every transport is timed the same way.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "fanout/fanout_shared.hpp"
#include "ferry/bench/clock.hpp"
#include "latency/latency_transport.hpp"  // kPeerTimeoutNs

namespace ferry::bench {

class PrivateDomain;

inline constexpr std::uint64_t kFanoutSize = 64;

struct FanoutPlan {
  std::uint32_t subscribers = 1;
  std::uint64_t warmup = 0;   // samples sent first and not counted
  std::uint64_t samples = 0;  // then measured
  std::int64_t gap_ns = 0;    // pause after every subscriber took a sample
  std::uint64_t run = 0;      // index of this run (topic slot, service names)
  const PrivateDomain* domain = nullptr;
};

class FanoutTransport {
 public:
  virtual ~FanoutTransport() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual std::string describe() const = 0;
  virtual void prepare(const FanoutPlan& /*plan*/) {}
  virtual void finish() {}
  virtual int publish(const FanoutPlan& plan, FanoutShared& shared) = 0;
  virtual int subscribe(const FanoutPlan& plan, FanoutShared& shared, std::uint32_t index) = 0;
};

[[nodiscard]] std::unique_ptr<FanoutTransport> make_ferry_fanout(bool loan);
// The topic of ferry's runs with `subscribers` (without the slot suffix):
// a bytes topic for loans, one of an opaque 64 B type for inline samples.
[[nodiscard]] std::string fanout_topic(std::uint32_t subscribers, bool loan);
[[nodiscard]] std::unique_ptr<FanoutTransport> make_unix_socket_fanout();
// Defined only when iceoryx was built (FERRY_BENCH_HAVE_ICEORYX).
[[nodiscard]] std::unique_ptr<FanoutTransport> make_iceoryx_fanout();

// Joins the start barrier of the publisher and its subscribers. False
// after 10 s, reported as "<waiting> did not start within 10 s".
inline bool fanout_started(const FanoutPlan& plan, RunControl& control, std::string_view waiting) {
  if (start_barrier(control, 1 + plan.subscribers, 10'000'000'000)) return true;
  report_error(control, std::string(waiting) + " did not start within 10 s");
  return false;
}

// The publisher's loop, after its ports are set up: joins the start
// barrier, then for every sample times `send(seq)` (the publish, for all K
// subscribers) and waits until all K took it, then pauses gap_ns. False
// (reported) on an error or a subscriber that stops taking.
template <class Send>
bool fanout_publish_loop(const FanoutPlan& plan, FanoutShared& shared, Send&& send) {
  RunControl& control = shared.control();
  if (!fanout_started(plan, control, "publisher: the subscribers")) return false;
  const std::uint64_t total = plan.warmup + plan.samples;
  for (std::uint64_t seq = 0; seq < total; ++seq) {
    const std::int64_t t0 = now_ns();
    if (!send(seq)) return false;
    const std::int64_t t1 = now_ns();
    if (seq >= plan.warmup) {
      shared.publish_start(seq - plan.warmup) = t0;
      shared.publish_cost(seq - plan.warmup) = t1 - t0;
    }
    const std::uint64_t want = (seq + 1) * plan.subscribers;
    const std::int64_t deadline = t1 + kPeerTimeoutNs;
    // SYNC: acquire, pairs with each subscriber's release increment.
    while (shared.taken().load(std::memory_order_acquire) < want) {
      if (now_ns() > deadline) {
        report_error(control, "publisher: a subscriber did not take a sample within 10 s");
        return false;
      }
      std::this_thread::yield();
    }
    // Every subscriber goes back to sleep meanwhile: the next sample wakes them all.
    const std::int64_t until = now_ns() + plan.gap_ns;
    while (now_ns() < until) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// A subscriber's loop: joins the barrier, then `next(seq)` waits (asleep)
// for each sample; its arrival time is recorded. False (reported) on an error.
template <class Next>
bool fanout_subscribe_loop(const FanoutPlan& plan, FanoutShared& shared, std::uint32_t index,
                           Next&& next) {
  RunControl& control = shared.control();
  if (!fanout_started(plan, control, "subscriber: the publisher")) return false;
  const std::uint64_t total = plan.warmup + plan.samples;
  for (std::uint64_t expected = 0; expected < total; ++expected) {
    std::uint64_t seq = 0;
    if (!next(seq)) return false;
    const std::int64_t now = now_ns();
    if (seq != expected) {
      report_error(control, "subscriber: a sample was lost, repeated or out of order");
      return false;
    }
    if (seq >= plan.warmup) shared.woke(index, seq - plan.warmup) = now;
    // SYNC: release, pairs with the publisher's acquire load: the time above is written.
    shared.taken().fetch_add(1, std::memory_order_release);
  }
  return true;
}

}  // namespace ferry::bench
