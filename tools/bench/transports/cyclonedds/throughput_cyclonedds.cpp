// The Cyclone DDS comparator (optional, see latency_cyclonedds.cpp): one
// writer on the run's stream topic, `receivers` readers, all reliable and
// keep-all, so that nothing is lost: the writer waits while its unacknowledged
// samples exceed Cyclone's watermarks (ferry's `block`). Every sample is
// serialized once and sent over loopback UDP to each reader.
#include <fmt/format.h>
#include <unistd.h>

#include <optional>

#include "ferry/bench/machine.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/cyclonedds/cyclonedds_side.hpp"

namespace ferry::bench {

namespace {

class CycloneThroughput final : public ThroughputTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kCycloneDds; }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    return fmt::format(
        "Cyclone DDS {} write / take (loaned, up to 64 at a time), reliable keep-all, over "
        "loopback UDP ({}): serialized and copied at every size, one send per reader",
        DDS_VERSION, "a WaitSet wait when empty, at every --wait");
  }

  void prepare(const ThroughputPlan& plan) override {
    topic_ = fmt::format("ferry_bench_{}_{}_stream", orchestrator_, plan.run);
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    const char* who = "cyclonedds sender";
    std::string error;
    // Cyclone's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = CycloneNode::join(cyclone_domain_for(orchestrator_), error);
    if (!node) return setup_failed(control, error);
    const dds_entity_t w = node->writer(topic_, true, 0, error);
    if (w < 0) return setup_failed(control, error);
    if (!cyclone_matched(w, plan.receivers, kDdsMatchTimeoutNs)) {
      return setup_failed(control,
                          "cyclonedds sender: did not discover every receiver within 10 s");
    }
    std::vector<std::uint8_t> bytes(plan.size, 0x5a);
    free_threads.reset();  // this side pinned again (with --cpus)
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      return cyclone_write(w, bytes, seq, control, who);
    });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    const char* who = "cyclonedds receiver";
    std::string error;
    // Cyclone's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = CycloneNode::join(cyclone_domain_for(orchestrator_), error);
    if (!node) return setup_failed(control, error);
    const dds_entity_t r = node->reader(topic_, true, 0, error);
    if (r < 0) return setup_failed(control, error);
    CycloneTaker taker(r);
    if (!cyclone_matched(r, 1, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "cyclonedds receiver: did not discover the sender within 10 s");
    }
    free_threads.reset();  // this side pinned again (with --cpus)
    const bool ok = receive_loop(plan, control, index, [&](std::uint64_t& seq) {
      const ferry_bench_Payload* p = taker.next(control, who);
      if (p == nullptr) return false;
      seq = cyclone_seq(*p);
      if (seq != kStopSeq && cyclone_size(*p) != plan.size) seq = 0;  // counted as out of sequence
      return true;
    });
    return ok ? 0 : 3;
  }

 private:
  int orchestrator_ = ::getpid();
  std::string topic_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_cyclonedds_throughput() {
  return std::make_unique<CycloneThroughput>();
}

}  // namespace ferry::bench
