// The iceoryx comparator (optional: built when CMake finds iceoryx): the
// pinger loans a chunk of `size` bytes on the run's ping service, writes
// its sequence number and publishes it; the echo side takes it, loans a
// pong chunk, copies the sequence number, releases the ping and publishes
// the pong. Zero copy at every size, like ferry's loan path. Both go
// through the RouDi this transport starts once per invocation, with a
// mempool per size asked (iceoryx_roudi.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include "harness/private_domain.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/iceoryx/iceoryx_roudi.hpp"
#include "transports/iceoryx/iceoryx_side.hpp"

namespace ferry::bench {

namespace {

// One message in flight; a queue as deep as the others' for the same reason.
constexpr std::uint64_t kLatencyQueueCapacity = 64;

class IceoryxLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kIceoryx; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "iceoryx 2.0 loan / publish / {} (untyped, through its own RouDi; blocking queues): "
        "zero copy, the chunk stays in RouDi's pool",
        wait == Wait::Spin ? "take() polled" : "take(), a WaitSet wait when empty");
  }

  void prepare(const LatencyPlan& plan) override {
    // Once per invocation, sized for every size asked: a RouDi start
    // (~65 MB of management segment) per run would dwarf the runs.
    if (!roudi_ && roudi_error_.empty()) {
      auto r = RouDi::start(plan.domain->runtime_dir(), iceoryx_latency_pools(plan.all_sizes));
      if (r) {
        roudi_ = std::move(*r);
      } else {
        roudi_error_ = r.error();
      }
    }
    if (roudi_) roudi_error_ = roudi_->check();
    ping_name_ = fmt::format("ferry-bench-{}-{}-ping", ::getpid(), plan.run);
    echo_name_ = fmt::format("ferry-bench-{}-{}-echo", ::getpid(), plan.run);
  }
  void finish() override {
    remove_iceoryx_app_files(ping_name_);
    remove_iceoryx_app_files(echo_name_);
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    if (!roudi_error_.empty()) {
      report_error(control, roudi_error_);
      return 2;
    }
    join_iceoryx(ping_name_);
    int code = 0;
    {
      iox::popo::UntypedPublisher pub(iceoryx_service(plan.run, "ping"),
                                      iceoryx_publisher_options());
      iox::popo::UntypedSubscriber sub(iceoryx_service(plan.run, "pong"),
                                       iceoryx_subscriber_options(kLatencyQueueCapacity));
      code = ping_with(plan, control, pub, sub);
    }
    leave_iceoryx();
    return code;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    if (!roudi_error_.empty()) {
      report_error(control, roudi_error_);
      return 2;
    }
    join_iceoryx(echo_name_);
    int code = 0;
    {
      iox::popo::UntypedSubscriber sub(iceoryx_service(plan.run, "ping"),
                                       iceoryx_subscriber_options(kLatencyQueueCapacity));
      iox::popo::UntypedPublisher pub(iceoryx_service(plan.run, "pong"),
                                      iceoryx_publisher_options());
      code = echo_with(plan, control, pub, sub);
    }
    leave_iceoryx();
    return code;
  }

 private:
  static int ping_with(const LatencyPlan& plan, RunControl& control,
                       iox::popo::UntypedPublisher& pub, iox::popo::UntypedSubscriber& sub) {
    const char* who = "iceoryx ping";
    ChunkWaiter waiter(sub, plan.wait);
    if (!wait_connected(sub, &pub)) {
      report_error(control, "iceoryx ping: RouDi did not connect it to the echo side within 10 s");
      return 2;
    }
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, "iceoryx ping: the echo side did not start");
      return 2;
    }
    const std::uint64_t size = plan.size;
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!publish_seq(pub, size, seq, control, who)) return false;
      const std::byte* p = waiter.next(control, who);
      if (p == nullptr) return false;
      const std::uint64_t got = read_seq(p), got_size = iceoryx_payload_size(p);
      waiter.release(p);
      if (got != seq || got_size != size) {
        report_error(control, fmt::format("{}: expected pong {} of {} bytes, got {} of {}", who,
                                          seq, size, got, got_size));
        return false;
      }
      return true;
    });
    (void)publish_seq(pub, size, kStopSeq, control, who);
    (void)wait_finished(control, 1,
                        kPeerTimeoutNs);  // the echo side got the stop before our port goes
    return ok ? 0 : 3;
  }

  static int echo_with(const LatencyPlan& plan, RunControl& control,
                       iox::popo::UntypedPublisher& pub, iox::popo::UntypedSubscriber& sub) {
    const char* who = "iceoryx echo";
    ChunkWaiter waiter(sub, plan.wait);
    if (!wait_connected(sub, &pub)) {
      report_error(control, "iceoryx echo: RouDi did not connect it to the ping side within 10 s");
      return 2;
    }
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, "iceoryx echo: the ping side did not start");
      return 2;
    }
    for (;;) {
      const std::byte* p = waiter.next(control, who);
      if (p == nullptr) return 3;
      const std::uint64_t seq = read_seq(p);
      if (seq == kStopSeq) {
        waiter.release(p);
        break;
      }
      auto loan = pub.loan(static_cast<std::uint32_t>(plan.size));
      if (loan.has_error()) {
        report_error(control, fmt::format("{}: loan failed (iceoryx AllocationError {})", who,
                                          static_cast<int>(loan.get_error())));
        return 3;
      }
      write_seq(static_cast<std::byte*>(loan.value()), seq);
      waiter.release(p);  // the ping goes back to the pool before we answer
      pub.publish(loan.value());
    }
    mark_finished(control);
    return 0;
  }

  std::unique_ptr<RouDi> roudi_;  // stopped (by pid) when the benchmark's transports go
  std::string roudi_error_;       // why there is no RouDi: every run reports it
  std::string ping_name_, echo_name_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_iceoryx_latency() {
  return std::make_unique<IceoryxLatency>();
}

}  // namespace ferry::bench
