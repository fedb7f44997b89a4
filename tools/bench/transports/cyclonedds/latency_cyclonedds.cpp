// The Cyclone DDS comparator (optional: built when CMake finds Cyclone DDS
// and its idlc): the pinger writes a sample of `size` bytes (an unbounded
// byte sequence, the first 8 its sequence number) on the run's ping topic;
// the echo side takes it (loaned) and writes a pong of the same size; both
// reliable, keep-last, in a domain of this invocation's own over loopback
// (cyclonedds_side.hpp). Every sample is serialized, sent over UDP and
// deserialized: what a ROS 2 user of rmw_cyclonedds gets between processes
// without its shared-memory option.
#include <fmt/format.h>
#include <unistd.h>

#include <optional>

#include "ferry/bench/machine.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/cyclonedds/cyclonedds_side.hpp"

namespace ferry::bench {

namespace {

constexpr std::int32_t kDepth = 16;  // one sample in flight; room for a stray resend

class CycloneLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kCycloneDds; }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    return fmt::format(
        "Cyclone DDS {} write / take (loaned), reliable keep-last, over loopback UDP in a domain "
        "of its own ({}): serialized and copied at every size",
        DDS_VERSION, "a WaitSet wait when empty, at every --wait");
  }

  void prepare(const LatencyPlan& plan) override {
    ping_topic_ = fmt::format("ferry_bench_{}_{}_ping", orchestrator_, plan.run);
    pong_topic_ = fmt::format("ferry_bench_{}_{}_pong", orchestrator_, plan.run);
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    const char* who = "cyclonedds ping";
    std::string error;
    // Cyclone's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = CycloneNode::join(cyclone_domain_for(orchestrator_), error);
    if (!node) return setup_failed(control, error);
    const dds_entity_t w = node->writer(ping_topic_, false, kDepth, error);
    const dds_entity_t r = w < 0 ? w : node->reader(pong_topic_, false, kDepth, error);
    if (r < 0) return setup_failed(control, error);
    CycloneTaker taker(r);
    if (!cyclone_matched(w, 1, kDdsMatchTimeoutNs) || !cyclone_matched(r, 1, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "cyclonedds ping: did not discover the echo side within 10 s");
    }
    free_threads.reset();  // this side pinned again (with --cpus)
    if (!start_barrier(control, 2, 10'000'000'000)) {
      return setup_failed(control, "cyclonedds ping: the echo side did not start");
    }
    std::vector<std::uint8_t> bytes(plan.size, 0x5a);
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!cyclone_write(w, bytes, seq, control, who)) return false;
      const ferry_bench_Payload* p = taker.next(control, who);
      if (p == nullptr) return false;
      if (cyclone_seq(*p) != seq || cyclone_size(*p) != plan.size) {
        report_error(control, fmt::format("{}: expected pong {} of {} bytes, got {} of {}", who,
                                          seq, plan.size, cyclone_seq(*p), cyclone_size(*p)));
        return false;
      }
      return true;
    });
    (void)cyclone_write(w, bytes, kStopSeq, control, who);
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    const char* who = "cyclonedds echo";
    std::string error;
    // Cyclone's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = CycloneNode::join(cyclone_domain_for(orchestrator_), error);
    if (!node) return setup_failed(control, error);
    const dds_entity_t r = node->reader(ping_topic_, false, kDepth, error);
    const dds_entity_t w = r < 0 ? r : node->writer(pong_topic_, false, kDepth, error);
    if (w < 0) return setup_failed(control, error);
    CycloneTaker taker(r);
    if (!cyclone_matched(w, 1, kDdsMatchTimeoutNs) || !cyclone_matched(r, 1, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "cyclonedds echo: did not discover the ping side within 10 s");
    }
    free_threads.reset();  // this side pinned again (with --cpus)
    if (!start_barrier(control, 2, 10'000'000'000)) {
      return setup_failed(control, "cyclonedds echo: the ping side did not start");
    }
    std::vector<std::uint8_t> bytes(plan.size, 0xa5);
    for (;;) {
      const ferry_bench_Payload* p = taker.next(control, who);
      if (p == nullptr) return 3;
      const std::uint64_t seq = cyclone_seq(*p);
      if (seq == kStopSeq) break;
      if (!cyclone_write(w, bytes, seq, control, who)) return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  int orchestrator_ = ::getpid();
  std::string ping_topic_, pong_topic_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_cyclonedds_latency() {
  return std::make_unique<CycloneLatency>();
}

}  // namespace ferry::bench
