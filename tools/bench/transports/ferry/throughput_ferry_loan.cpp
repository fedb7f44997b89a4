// ferry's loan path for throughput (ferry-loan, and ferry above the inline
// limit): one publisher and K subscribers (each its own process) on a bytes
// topic with policy block. Every message is a loan of `size` bytes with its
// sequence number in front.
#include <fmt/format.h>

#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/ferry/ferry_side.hpp"
#include "transports/ferry/throughput_ferry_side.hpp"

namespace ferry::bench {

namespace {

class FerryLoanThroughput final : public ThroughputTransport {
 public:
  explicit FerryLoanThroughput(std::string_view name) : name_(name) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "loan(n) / publish / {} on a bytes topic, policy block: zero copy, each subscriber "
        "its own queue",
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "publisher", plan.wait);
    auto pub =
        node.publisher<ferry::Bytes>(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    if (!wait_matched([&] { return pub.subscriber_count() == plan.receivers; })) {
      report_error(
          control,
          fmt::format("{} publisher: ferryd did not match every subscriber within 10 s", name_));
      return 2;
    }
    const std::uint64_t size = plan.size;
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      auto loan = pub.loan(size);
      if (!loan) {
        report_error(control, fmt::format("{} publisher: loan failed: {}", name_,
                                          ferry::to_string(loan.error())));
        return false;
      }
      write_seq((*loan)->data(), seq);
      (void)pub.publish(
          std::move(*loan));  // a queue still full at the deadline shows as a sequence gap
      return true;
    });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    ferry::Node node = join_domain(*plan.domain, fmt::format("subscriber{}", index), plan.wait);
    auto sub =
        node.subscriber<ferry::Bytes>(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    return receive_samples(sub, plan, control, index, name_);
  }

 private:
  static constexpr FerryPath kPath = FerryPath::Loan;
  std::string_view name_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_ferry_loan_throughput(std::string_view name) {
  return std::make_unique<FerryLoanThroughput>(name);
}

}  // namespace ferry::bench
