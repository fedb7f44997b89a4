// ferry's loan path (ferry-loan, and ferry above the inline limit): the
// pinger loans a sample of `size` bytes
// on the ping topic, writes its sequence number and publishes it; the echo
// side takes it, loans a pong sample, copies the sequence number, releases
// the ping and publishes the pong; the pinger takes it. Only the 8-byte
// sequence number is written: the payload stays in the pool (zero copy).
#include <fmt/format.h>

#include "ferry/bench/clock.hpp"
#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

namespace {

using BytesPublisher = ferry::Publisher<ferry::Bytes>;
using BytesSubscriber = ferry::Subscriber<ferry::Bytes>;

// Loans, stamps and publishes one sample; false (reported) when no subscriber took it.
bool publish_seq(BytesPublisher& pub, std::uint64_t size, std::uint64_t seq, RunControl& control,
                 const char* who) {
  auto loan = pub.loan(size);
  if (!loan) {
    report_error(control, fmt::format("{}: loan of {} bytes failed: {}", who, size,
                                      ferry::to_string(loan.error())));
    return false;
  }
  write_seq((*loan)->data(), seq);
  const ferry::PublishResult r = pub.publish(std::move(*loan));
  if (r.delivered == 0) {
    report_error(control,
                 fmt::format("{}: publish reached no subscriber (dropped {}, timed out {})", who,
                             r.dropped, r.timed_out));
    return false;
  }
  return true;
}

// A side's node and ports: it publishes on topics.out and takes from topics.in.
struct BytesSide {
  BytesSide(const LatencyPlan& plan, std::string_view transport, const char* role,
            const SideTopics& topics)
      : node(join_domain(*plan.domain, role, plan.wait)),
        sub(node.subscriber<ferry::Bytes>(topics.in)),
        pub(node.publisher<ferry::Bytes>(topics.out)),
        who(fmt::format("{} {}", transport, role)) {}
  ferry::Node node;
  BytesSubscriber sub;
  BytesPublisher pub;
  std::string who;
};

class FerryLoanLatency final : public LatencyTransport {
 public:
  explicit FerryLoanLatency(std::string_view name) : name_(name) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "loan(n) / publish / {} on a bytes topic (policy block): zero copy, the sample stays in "
        "the pool",
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    BytesSide side(plan, name_, "ping", ping_side_topics(plan, kPath));
    if (!latency_side_ready(side.pub, side.sub, control, side.who, "echo")) return 2;
    auto& [node, sub, pub, who] = side;
    const std::uint64_t size = plan.size;
    const Wait wait = plan.wait;
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!publish_seq(pub, size, seq, control, who.c_str())) return false;
      auto s = next_sample(sub, wait, control, who.c_str());
      if (!s) return false;
      if ((*s)->size() != size || read_seq((*s)->data()) != seq) {
        report_error(control, fmt::format("{}: expected pong {} of {} bytes, got {} of {}", who,
                                          seq, size, read_seq((*s)->data()), (*s)->size()));
        return false;
      }
      return true;
    });
    (void)publish_seq(pub, size, kStopSeq, control, who.c_str());
    (void)wait_finished(control, 1,
                        kPeerTimeoutNs);  // the echo side got the stop before our queue goes
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    BytesSide side(plan, name_, "echo", echo_side_topics(plan, kPath));
    if (!latency_side_ready(side.pub, side.sub, control, side.who, "ping")) return 2;
    auto& [node, sub, pub, who] = side;
    for (;;) {
      auto s = next_sample(sub, plan.wait, control, who.c_str());
      if (!s) return 3;
      const std::uint64_t seq = read_seq((*s)->data());
      if (seq == kStopSeq) break;
      auto loan = pub.loan(plan.size);
      if (!loan) {
        report_error(control,
                     fmt::format("{}: loan failed: {}", who, ferry::to_string(loan.error())));
        return 3;
      }
      write_seq((*loan)->data(), seq);
      s.reset();  // the ping goes back to the pool before we answer
      if (!pong_delivered(pub.publish(std::move(*loan)), control, who)) return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  static constexpr FerryPath kPath = FerryPath::Loan;
  std::string_view name_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_ferry_loan_latency(std::string_view name) {
  return std::make_unique<FerryLoanLatency>(name);
}

}  // namespace ferry::bench
