// The Fast DDS comparator (optional, see latency_fastdds.cpp): one writer
// on the run's stream topic, `receivers` readers, reliable and keep-all so
// that nothing is lost (a full history makes the writer wait, ferry's
// `block`); each sample loaned and written once, then carried by Fast
// DDS's shared-memory transport to every reader (data-sharing off for
// keep-all: fastdds_side.cpp says why).
#include <fmt/format.h>
#include <unistd.h>

#include <optional>

#include "ferry/bench/machine.hpp"
#include "harness/seq.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/fastdds/fastdds_side.hpp"

namespace ferry::bench {

namespace {

class FastThroughput final : public ThroughputTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kFastDds; }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    return fmt::format(
        "Fast DDS 2 loan_sample / write / take (loaned, up to 64 at a time), plain fixed-size "
        "type, reliable keep-all, its shared-memory transport (data-sharing off: a keep-all "
        "data-sharing writer stalls) ({}): copied into the transport's segment",
        "wait_for_unread_message when empty, at every --wait");
  }

  void prepare(const ThroughputPlan& plan) override {
    topic_ = fmt::format("ferry_bench_{}_{}_stream", orchestrator_, plan.run);
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    const char* who = "fastdds sender";
    std::string error;
    // Fast DDS's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = FastNode::join(fastdds_domain_for(orchestrator_), plan.size, error);
    if (!node) return setup_failed(control, error);
    auto* w = node->writer(topic_, true, error);
    if (w == nullptr) return setup_failed(control, error);
    if (!fastdds_matched(w, plan.receivers, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "fastdds sender: did not discover every receiver within 10 s");
    }
    free_threads.reset();  // this side pinned again (with --cpus)
    const bool ok = send_loop(
        plan, control, [&](std::uint64_t seq) { return fastdds_write(w, seq, control, who); });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    const char* who = "fastdds receiver";
    std::string error;
    // Fast DDS's threads, made now, may run on any CPU (machine.hpp).
    std::optional<UnpinnedScope> free_threads(std::in_place);
    auto node = FastNode::join(fastdds_domain_for(orchestrator_), plan.size, error);
    if (!node) return setup_failed(control, error);
    auto* r = node->reader(topic_, true, error);
    if (r == nullptr) return setup_failed(control, error);
    if (!fastdds_matched(r, 1, kDdsMatchTimeoutNs)) {
      return setup_failed(control, "fastdds receiver: did not discover the sender within 10 s");
    }
    FastTaker taker(r);
    free_threads.reset();  // this side pinned again (with --cpus)
    const bool ok = receive_loop(plan, control, index, [&](std::uint64_t& seq) {
      const std::byte* p = taker.next(control, who);
      if (p == nullptr) return false;
      seq = read_seq(p);
      return true;
    });
    return ok ? 0 : 3;
  }

 private:
  int orchestrator_ = ::getpid();
  std::string topic_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_fastdds_throughput() {
  return std::make_unique<FastThroughput>();
}

}  // namespace ferry::bench
