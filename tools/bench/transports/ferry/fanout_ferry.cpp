// ferry's fanout sides: one publisher, K subscribers each in take(timeout)
// with take_spin 0 (asleep on its doorbell at once). Inline: publish of a
// 64 B sample copied into each subscriber's ring slot (raw ports on a topic
// of an opaque 64 B type); loan: loan(64) / publish on a bytes topic, one
// pool chunk referenced from every queue.
#include <fmt/format.h>

#include <vector>

#include "fanout/fanout_transport.hpp"
#include "harness/bench_config.hpp"
#include "harness/seq.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

std::string fanout_topic(std::uint32_t subscribers, bool loan) {
  return fmt::format("bench/fanout{}/{}", loan ? "" : "-copy", subscribers);
}

namespace {

// Every subscriber got the sample; else says what publish() returned.
bool delivered_to_all(const ferry::PublishResult& r, const FanoutPlan& plan, RunControl& control) {
  if (r.delivered == plan.subscribers) return true;
  report_error(
      control,
      fmt::format("ferry publisher: publish delivered to {} of {} subscribers (dropped {}, "
                  "timed out {}{})",
                  r.delivered, plan.subscribers, r.dropped, r.timed_out,
                  r.error ? fmt::format(", error {}", ferry::to_string(*r.error)) : ""));
  return false;
}

class FerryFanout final : public FanoutTransport {
 public:
  explicit FerryFanout(bool loan) : loan_(loan) {}
  [[nodiscard]] std::string_view name() const noexcept override {
    return loan_ ? kFerryLoan : kFerry;
  }
  [[nodiscard]] std::string describe() const override {
    return loan_ ? "loan(64) / publish on a bytes topic: one pool chunk, a reference in each "
                   "subscriber's queue; take(timeout) with take_spin 0"
                 : "publish(const T&) of a 64 B T: copied into each subscriber's ring slot; "
                   "take(timeout) with take_spin 0";
  }

  int publish(const FanoutPlan& plan, FanoutShared& shared) override {
    RunControl& control = shared.control();
    ferry::Node node = join_domain(*plan.domain, "publisher", Wait::Sleep);
    const std::string topic = slot_topic(fanout_topic(plan.subscribers, loan_), plan.run);
    const auto matched = [&](const auto& pub) {
      if (wait_matched([&] { return pub.subscriber_count() == plan.subscribers; })) return true;
      report_error(control, "ferry publisher: ferryd did not match every subscriber within 10 s");
      return false;
    };
    bool ok = false;
    if (loan_) {
      auto pub = node.publisher<ferry::Bytes>(topic);
      if (!matched(pub)) return 2;
      ok = fanout_publish_loop(plan, shared, [&](std::uint64_t seq) {
        auto loan = pub.loan(kFanoutSize);
        if (!loan) {
          report_error(control, fmt::format("ferry-loan publisher: loan failed: {}",
                                            ferry::to_string(loan.error())));
          return false;
        }
        write_seq((*loan)->data(), seq);
        return delivered_to_all(pub.publish(std::move(*loan)), plan, control);
      });
    } else {
      ferry::RawPublisher pub = node.raw_publisher(topic);
      if (!matched(pub)) return 2;
      std::vector<std::byte> msg(kFanoutSize, std::byte{0x5a});
      ok = fanout_publish_loop(plan, shared, [&](std::uint64_t seq) {
        write_seq(msg.data(), seq);
        return delivered_to_all(pub.publish(msg), plan, control);
      });
    }
    return ok ? 0 : 3;
  }

  int subscribe(const FanoutPlan& plan, FanoutShared& shared, std::uint32_t index) override {
    RunControl& control = shared.control();
    ferry::Node node = join_domain(*plan.domain, fmt::format("subscriber{}", index), Wait::Sleep);
    const std::string topic = slot_topic(fanout_topic(plan.subscribers, loan_), plan.run);
    const auto run = [&](auto& sub) {
      if (!wait_matched([&] { return sub.publisher_count() == 1; })) {
        report_error(control, "ferry subscriber: ferryd did not match the publisher within 10 s");
        return false;
      }
      return fanout_subscribe_loop(plan, shared, index, [&](std::uint64_t& seq) {
        auto s = next_sample(sub, Wait::Sleep, control, "ferry subscriber");
        if (!s) return false;
        seq = read_seq(sample_data(*s));
        return true;
      });
    };
    if (loan_) {
      auto sub = node.subscriber<ferry::Bytes>(topic);
      return run(sub) ? 0 : 3;
    }
    ferry::RawSubscriber sub = node.raw_subscriber(topic);
    return run(sub) ? 0 : 3;
  }

 private:
  static const std::byte* sample_data(const ferry::RawSample& s) { return s.bytes().data(); }
  static const std::byte* sample_data(const ferry::Sample<ferry::Bytes>& s) { return s->data(); }
  bool loan_;
};

}  // namespace

std::unique_ptr<FanoutTransport> make_ferry_fanout(bool loan) {
  return std::make_unique<FerryFanout>(loan);
}

}  // namespace ferry::bench
