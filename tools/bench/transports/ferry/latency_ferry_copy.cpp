// ferry's copy path (ferry-copy, and ferry up to the inline limit), what
// publish(const T&) does for a T of `size` bytes:
// the sample is copied into each queue's slot when it fits one (up to
// 4 KiB), else once into a pool chunk that the queues share. Raw ports on a
// topic of an opaque type of exactly `size` bytes take the same path as a
// typed Publisher<T>::publish(const T&) and Subscriber<T>::take().
#include <fmt/format.h>
#include <poll.h>

#include <memory>
#include <vector>

#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

namespace {

// The next sample as a side of `wake` waits for it when it sleeps:
// take(timeout), a WaitSet's wait(), or poll() on the WaitSet's fd() and
// then wait(0). Spinning is the same for all: take() polled.
class SampleWaiter {
 public:
  SampleWaiter(ferry::RawSubscriber& sub, FerryWake wake, Wait wait)
      : sub_(sub), wake_(wake), wait_(wait) {
    if (wake_ == FerryWake::Take || wait_ == Wait::Spin) return;
    wait_set_ = std::make_unique<ferry::WaitSet>();
    wait_set_->attach(sub_);
    if (wake_ == FerryWake::Fd) fd_ = wait_set_->fd();
  }
  std::optional<ferry::RawSample> next(RunControl& control, const char* who) {
    if (!wait_set_) return next_sample(sub_, wait_, control, who);
    const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
    for (;;) {
      if (auto s = sub_.take()) return s;
      const std::int64_t left = deadline - now_ns();
      if (left <= 0) break;
      if (wake_ == FerryWake::WaitSet) {
        (void)wait_set_->wait(std::chrono::nanoseconds(left));
      } else {
        pollfd p{fd_, POLLIN, 0};
        (void)::poll(&p, 1, static_cast<int>(left / 1'000'000) + 1);
        (void)wait_set_->wait(
            std::chrono::nanoseconds::zero());  // reads the descriptor clear, re-arms it
      }
    }
    report_no_sample(control, who, nullptr);
    return std::nullopt;
  }

 private:
  ferry::RawSubscriber& sub_;
  FerryWake wake_;
  Wait wait_;
  std::unique_ptr<ferry::WaitSet> wait_set_;  // not movable: held here
  int fd_ = -1;
};

const char* sleep_path(FerryWake wake) {
  switch (wake) {
    case FerryWake::WaitSet:
      return "WaitSet::wait() (one futex_waitv), then take()";
    case FerryWake::Fd:
      return "poll() on WaitSet::fd() (its helper thread's eventfd), wait(0), then take()";
    case FerryWake::Take:
      break;
  }
  return "take(timeout) with take_spin 0 (a futex sleep at once)";
}

class FerryCopyLatency final : public LatencyTransport {
 public:
  FerryCopyLatency(std::string_view name, FerryWake wake) : name_(name), wake_(wake) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "publish(const T&) / {} of a T of the message size: copied into the slot (up to 4 KiB), "
        "above once into a pool chunk",
        wait == Wait::Spin ? "take() polled" : sleep_path(wake_));
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "ping", plan.wait);
    const SideTopics topics = ping_side_topics(plan, kPath);
    ferry::RawPublisher pub = node.raw_publisher(topics.out);
    ferry::RawSubscriber sub = node.raw_subscriber(topics.in);
    const std::string who = fmt::format("{} ping", name_);
    if (!latency_side_ready(pub, sub, control, who, "echo")) return 2;
    SampleWaiter waiter(sub, wake_, plan.wait);
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
      auto s = waiter.next(control, who.c_str());
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
    ferry::Node node = join_domain(*plan.domain, "echo", plan.wait);
    const SideTopics topics = echo_side_topics(plan, kPath);
    ferry::RawSubscriber sub = node.raw_subscriber(topics.in);
    ferry::RawPublisher pub = node.raw_publisher(topics.out);
    const std::string who = fmt::format("{} echo", name_);
    if (!latency_side_ready(pub, sub, control, who, "ping")) return 2;
    SampleWaiter waiter(sub, wake_, plan.wait);
    std::vector<std::byte> reply(plan.size, std::byte{0xa5});
    for (;;) {
      auto s = waiter.next(control, who.c_str());
      if (!s) return 3;
      const std::uint64_t seq = read_seq(s->data());
      if (seq == kStopSeq) break;
      s.reset();
      write_seq(reply.data(), seq);
      if (!pong_delivered(pub.publish(reply), control, who)) return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  static constexpr FerryPath kPath = FerryPath::Copy;
  std::string_view name_;
  FerryWake wake_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_ferry_copy_latency(std::string_view name, FerryWake wake) {
  return std::make_unique<FerryCopyLatency>(name, wake);
}

}  // namespace ferry::bench
