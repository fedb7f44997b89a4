// The iceoryx comparator of `ferry bench fanout` (built when CMake finds
// iceoryx): loan / publish of a 64 B chunk on the run's service, K
// subscribers each asleep on an iceoryx WaitSet until it has data. Through
// the RouDi this transport starts once per invocation.
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <vector>

#include "fanout/fanout_transport.hpp"
#include "harness/private_domain.hpp"
#include "harness/seq.hpp"
#include "transports/iceoryx/iceoryx_roudi.hpp"
#include "transports/iceoryx/iceoryx_side.hpp"

namespace ferry::bench {

namespace {

constexpr std::uint64_t kFanoutQueueCapacity = 16;  // one sample in flight

class IceoryxFanout final : public FanoutTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kIceoryx; }
  [[nodiscard]] std::string describe() const override {
    return "iceoryx 2.0 loan / publish (untyped, its own RouDi, blocking queues): one chunk for "
           "all; each subscriber asleep on a WaitSet, then take()";
  }

  void prepare(const FanoutPlan& plan) override {
    if (!roudi_ && roudi_error_.empty()) {
      const std::array<std::uint64_t, 1> sizes{kFanoutSize};
      auto r = RouDi::start(plan.domain->runtime_dir(),
                            iceoryx_throughput_pools(sizes, kMaxSubscribers));
      if (r) {
        roudi_ = std::move(*r);
      } else {
        roudi_error_ = r.error();
      }
    }
    if (roudi_) roudi_error_ = roudi_->check();
    names_.clear();
    names_.push_back(fmt::format("ferry-bench-{}-{}-fpub", ::getpid(), plan.run));
    for (std::uint32_t k = 0; k < plan.subscribers; ++k) {
      names_.push_back(fmt::format("ferry-bench-{}-{}-fsub{}", ::getpid(), plan.run, k));
    }
  }
  void finish() override {
    for (const auto& n : names_) remove_iceoryx_app_files(n);
  }

  int publish(const FanoutPlan& plan, FanoutShared& shared) override {
    RunControl& control = shared.control();
    if (!roudi_error_.empty()) {
      report_error(control, roudi_error_);
      return 2;
    }
    join_iceoryx(names_[0]);
    bool ok = false;
    {
      iox::popo::UntypedPublisher pub(iceoryx_service(plan.run, "fanout"),
                                      iceoryx_publisher_options());
      // The subscribers join the barrier once RouDi connected them.
      ok = fanout_publish_loop(plan, shared, [&](std::uint64_t seq) {
        return publish_seq(pub, kFanoutSize, seq, control, "iceoryx publisher");
      });
    }
    leave_iceoryx();
    return ok ? 0 : 3;
  }

  int subscribe(const FanoutPlan& plan, FanoutShared& shared, std::uint32_t index) override {
    RunControl& control = shared.control();
    if (!roudi_error_.empty()) {
      report_error(control, roudi_error_);
      return 2;
    }
    join_iceoryx(names_[1 + index]);
    bool ok = false;
    {
      iox::popo::UntypedSubscriber sub(iceoryx_service(plan.run, "fanout"),
                                       iceoryx_subscriber_options(kFanoutQueueCapacity));
      ChunkWaiter waiter(sub, Wait::Sleep);
      if (!wait_connected(sub, nullptr)) {
        report_error(control, "iceoryx subscriber: RouDi did not connect it within 10 s");
      } else {
        ok = fanout_subscribe_loop(plan, shared, index, [&](std::uint64_t& seq) {
          const std::byte* p = waiter.next(control, "iceoryx subscriber");
          if (p == nullptr) return false;
          seq = read_seq(p);
          waiter.release(p);
          return true;
        });
      }
    }
    leave_iceoryx();
    return ok ? 0 : 3;
  }

 private:
  std::unique_ptr<RouDi> roudi_;  // stopped (by pid) when the transports go
  std::string roudi_error_;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<FanoutTransport> make_iceoryx_fanout() { return std::make_unique<IceoryxFanout>(); }

}  // namespace ferry::bench
