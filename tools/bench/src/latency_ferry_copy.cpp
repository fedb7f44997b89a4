// ferry's copy path (ferry-copy, and ferry up to the inline limit), what
// publish(const T&) does for a T of `size` bytes:
// the sample is copied into each queue's slot when it fits one (up to
// 4 KiB), else once into a pool chunk that the queues share. Raw ports on a
// topic of an opaque type of exactly `size` bytes take the same path as a
// typed Publisher<T>::publish(const T&) and Subscriber<T>::take().
#include <vector>

#include <fmt/format.h>

#include "bench_config.hpp"
#include "ferry_side.hpp"
#include "latency_transport.hpp"
#include "ping_loop.hpp"
#include "private_domain.hpp"

namespace ferry::bench {

namespace {

class FerryCopyLatency final : public LatencyTransport {
 public:
  explicit FerryCopyLatency(std::string_view name) : name_(name) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format("publish(const T&) / {} of a T of the message size: copied into the slot (up to 4 KiB), "
                       "above once into a pool chunk",
                       wait == Wait::Spin ? "take() polled" : "take(timeout) (a short poll, then a futex sleep)");
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "ping");
    ferry::RawPublisher pub = node.raw_publisher(slot_topic(latency_ping_topic(plan.size, kPath), plan.run));
    ferry::RawSubscriber sub = node.raw_subscriber(slot_topic(latency_pong_topic(plan.size, kPath), plan.run));
    const std::string who = fmt::format("{} ping", name_);
    if (!latency_side_ready(pub, sub, control, who, "echo")) return 2;
    std::vector<std::byte> msg(plan.size, std::byte{0x5a});
    auto send = [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      if (pub.publish(msg).delivered == 0) {
        report_error(control, who + ": publish reached no subscriber");
        return false;
      }
      return true;
    };
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!send(seq)) return false;
      auto s = next_sample(sub, plan.wait, control, who.c_str());
      if (!s) return false;
      if (s->size() != plan.size || read_seq(s->data()) != seq) {
        report_error(control, fmt::format("{}: bad answer to {}", who, seq));
        return false;
      }
      return true;
    });
    (void)send(kStopSeq);
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "echo");
    ferry::RawSubscriber sub = node.raw_subscriber(slot_topic(latency_ping_topic(plan.size, kPath), plan.run));
    ferry::RawPublisher pub = node.raw_publisher(slot_topic(latency_pong_topic(plan.size, kPath), plan.run));
    const std::string who = fmt::format("{} echo", name_);
    if (!latency_side_ready(pub, sub, control, who, "ping")) return 2;
    std::vector<std::byte> reply(plan.size, std::byte{0xa5});
    for (;;) {
      auto s = next_sample(sub, plan.wait, control, who.c_str());
      if (!s) return 3;
      const std::uint64_t seq = read_seq(s->data());
      if (seq == kStopSeq) break;
      s.reset();
      write_seq(reply.data(), seq);
      if (pub.publish(reply).delivered == 0) {
        report_error(control, who + ": the pong reached no subscriber");
        return 3;
      }
    }
    mark_finished(control);
    return 0;
  }

 private:
  static constexpr FerryPath kPath = FerryPath::Copy;
  std::string_view name_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_ferry_copy_latency(std::string_view name) {
  return std::make_unique<FerryCopyLatency>(name);
}

}  // namespace ferry::bench
