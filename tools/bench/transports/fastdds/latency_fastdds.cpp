// The Fast DDS comparator (optional: built when CMake finds Fast DDS): the
// pinger loans a sample of `size` bytes (its plain fixed-size type,
// fastdds_type.hpp), writes its sequence number and writes it on the run's
// ping topic; the echo side takes it (loaned) and answers with a loaned
// pong. Reliable, keep-last, data-sharing on: zero copy at every size, the
// best a ROS 2 user gets from Fast DDS between processes
// (fastdds_side.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <optional>

#include "ferry/bench/machine.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/fastdds/fastdds_side.hpp"

namespace ferry::bench {

namespace {

class FastLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kFastDds; }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    return fmt::format(
        "Fast DDS 2 loan_sample / write / take (loaned), plain fixed-size type, reliable "
        "keep-last, data-sharing on, built-in shared-memory and UDPv4 transports ({}): zero copy",
        "wait_for_unread_message when empty, at every --wait");
  }

  void prepare(const LatencyPlan& plan) override {
    ping_topic_ = fmt::format("ferry_bench_{}_{}_ping", orchestrator_, plan.run);
    pong_topic_ = fmt::format("ferry_bench_{}_{}_pong", orchestrator_, plan.run);
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    const char* who = "fastdds ping";
    std::string error;
    // Fast DDS's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = FastNode::join(fastdds_domain_for(orchestrator_), plan.size, error);
    if (!node) return setup_failed(control, error);
    auto* w = node->writer(ping_topic_, false, error);
    auto* r = w == nullptr ? nullptr : node->reader(pong_topic_, false, error);
    if (r == nullptr) return setup_failed(control, error);
    if (!fastdds_matched(w, 1, kDdsMatchTimeoutNs) || !fastdds_matched(r, 1, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "fastdds ping: did not discover the echo side within 10 s");
    }
    free_threads.reset();  // this side pinned again (with --cpus)
    if (!start_barrier(control, 2, 10'000'000'000)) {
      return setup_failed(control, "fastdds ping: the echo side did not start");
    }
    int code = 0;
    {
      FastTaker taker(r);  // returns its loans before the node goes
      const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
        if (!fastdds_write(w, seq, control, who)) return false;
        const std::byte* p = taker.next(control, who);
        if (p == nullptr) return false;
        if (read_seq(p) != seq) {
          report_error(control, fmt::format("{}: expected pong {}, got {}", who, seq, read_seq(p)));
          return false;
        }
        return true;
      });
      (void)fastdds_write(w, kStopSeq, control, who);
      (void)wait_finished(control, 1, kPeerTimeoutNs);
      code = ok ? 0 : 3;
    }
    return code;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    const char* who = "fastdds echo";
    std::string error;
    // Fast DDS's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = FastNode::join(fastdds_domain_for(orchestrator_), plan.size, error);
    if (!node) return setup_failed(control, error);
    auto* r = node->reader(ping_topic_, false, error);
    auto* w = r == nullptr ? nullptr : node->writer(pong_topic_, false, error);
    if (w == nullptr) return setup_failed(control, error);
    if (!fastdds_matched(w, 1, kDdsMatchTimeoutNs) || !fastdds_matched(r, 1, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "fastdds echo: did not discover the ping side within 10 s");
    }
    free_threads.reset();  // this side pinned again (with --cpus)
    if (!start_barrier(control, 2, 10'000'000'000)) {
      return setup_failed(control, "fastdds echo: the ping side did not start");
    }
    FastTaker taker(r);
    for (;;) {
      const std::byte* p = taker.next(control, who);
      if (p == nullptr) return 3;
      const std::uint64_t seq = read_seq(p);
      if (seq == kStopSeq) break;
      if (!fastdds_write(w, seq, control, who)) return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  int orchestrator_ = ::getpid();
  std::string ping_topic_, pong_topic_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_fastdds_latency() { return std::make_unique<FastLatency>(); }

}  // namespace ferry::bench
