// The iceoryx comparator (optional: built when CMake finds iceoryx): one
// publisher on the run's stream service, `receivers` subscribers. The
// sender loans a chunk of `size` bytes, writes its sequence number and
// publishes it (zero copy at every size: one chunk for all receivers); each
// receiver takes it, reads the number in place and releases it. Lossless:
// a full queue makes the publisher wait (WAIT_FOR_CONSUMER /
// BLOCK_PRODUCER, ferry's `block`), with queues as deep as ferry's up to
// iceoryx's limit of 256.
#include <fmt/format.h>
#include <unistd.h>

#include "harness/private_domain.hpp"
#include "harness/seq.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/iceoryx/iceoryx_roudi.hpp"
#include "transports/iceoryx/iceoryx_side.hpp"

namespace ferry::bench {

namespace {

class IceoryxThroughput final : public ThroughputTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kIceoryx; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "iceoryx 2.0 loan / publish / {} (untyped, through its own RouDi; the publisher waits "
        "for a full queue): zero copy, one chunk for all receivers",
        wait == Wait::Spin ? "take() polled" : "take(), a WaitSet wait when empty");
  }

  void prepare(const ThroughputPlan& plan) override {
    // Once per invocation, sized for every size asked (see latency_iceoryx.cpp).
    if (!roudi_ && roudi_error_.empty()) {
      auto r = RouDi::start(plan.domain->runtime_dir(),
                            iceoryx_throughput_pools(plan.all_sizes, plan.receivers));
      if (r) {
        roudi_ = std::move(*r);
      } else {
        roudi_error_ = r.error();
      }
    }
    if (roudi_) roudi_error_ = roudi_->check();
    run_ = plan.run;
    receivers_ = plan.receivers;
  }
  void finish() override {
    remove_iceoryx_app_files(runtime_name("sender", 0));
    for (std::uint32_t k = 0; k < receivers_; ++k)
      remove_iceoryx_app_files(runtime_name("receiver", k));
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    if (!roudi_error_.empty()) {
      report_error(control, roudi_error_);
      return 2;
    }
    join_iceoryx(runtime_name("sender", 0));
    bool ok = false;
    {
      iox::popo::UntypedPublisher pub(iceoryx_service(plan.run, "stream"),
                                      iceoryx_publisher_options());
      // The receivers join the start barrier once subscribed: then the
      // publisher delivers to all of them.
      ok = send_loop(plan, control, [&](std::uint64_t seq) {
        return publish_seq(pub, plan.size, seq, control, "iceoryx sender");
      });
    }
    leave_iceoryx();
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    if (!roudi_error_.empty()) {
      report_error(control, roudi_error_);
      return 2;
    }
    join_iceoryx(runtime_name("receiver", index));
    int code = 0;
    {
      iox::popo::UntypedSubscriber sub(
          iceoryx_service(plan.run, "stream"),
          iceoryx_subscriber_options(iceoryx_queue_capacity(plan.size)));
      code = receive_with(plan, control, index, sub);
    }
    leave_iceoryx();
    return code;
  }

 private:
  static int receive_with(const ThroughputPlan& plan, RunControl& control, std::uint32_t index,
                          iox::popo::UntypedSubscriber& sub) {
    const char* who = "iceoryx receiver";
    ChunkWaiter waiter(sub, plan.wait);
    if (!wait_connected(sub, nullptr)) {
      report_error(control, "iceoryx receiver: RouDi did not connect it to the sender within 10 s");
      return 2;
    }
    const bool ok = receive_loop(plan, control, index, [&](std::uint64_t& seq) {
      const std::byte* p = waiter.next(control, who);
      if (p == nullptr) return false;
      seq = read_seq(p);
      if (seq != kStopSeq && iceoryx_payload_size(p) != plan.size)
        seq = 0;  // counted as out of sequence
      waiter.release(p);
      return true;
    });
    return ok ? 0 : 3;
  }

  [[nodiscard]] std::string runtime_name(const char* role, std::uint32_t k) const {
    return fmt::format("ferry-bench-{}-{}-{}{}", orchestrator_, run_, role, k);
  }

  std::unique_ptr<RouDi> roudi_;  // stopped (by pid) when the benchmark's transports go
  std::string roudi_error_;
  pid_t orchestrator_ = ::getpid();
  std::uint64_t run_ = 0;
  std::uint32_t receivers_ = 0;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_iceoryx_throughput() {
  return std::make_unique<IceoryxThroughput>();
}

}  // namespace ferry::bench
