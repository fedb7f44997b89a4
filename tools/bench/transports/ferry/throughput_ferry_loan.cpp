// ferry's loan path for throughput (ferry-loan, and ferry above the inline
// limit): one publisher and K subscribers (each its own process) on a bytes
// topic with policy block. Every message is a loan of `size` bytes with its
// sequence number in front. With --batch N: loan_many of N on a topic of a
// fixed-size type (raw ports), published with one publish_many each.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

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
        "its own queue; with --batch N, loan_many of N (at most the queue's capacity) / "
        "publish_many / take_many on a fixed-size topic",
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "publisher", plan.wait);
    if (plan.batch > 1) return send_batches(plan, control, node);
    auto pub =
        node.publisher<ferry::Bytes>(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    if (!publisher_matched(pub, plan, control, name_)) return 2;
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
    if (plan.batch > 1) {
      ferry::RawSubscriber sub =
          node.raw_subscriber(slot_topic(throughput_topic(plan.size, kPath), plan.run));
      return receive_batches(sub, plan, control, index, name_);
    }
    auto sub =
        node.subscriber<ferry::Bytes>(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    return receive_samples(sub, plan, control, index, name_);
  }

 private:
  // --batch N: each batch is a loan_many of N samples, written in place as
  // the sequence numbers come; the stop message ends the last one early
  // (shrink). A queue still full at the deadline shows as a gap.
  int send_batches(const ThroughputPlan& plan, RunControl& control, ferry::Node& node) {
    ferry::RawPublisher pub =
        node.raw_publisher(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    if (!publisher_matched(pub, plan, control, name_)) return 2;
    const std::size_t per_batch = std::min<std::size_t>(plan.batch, pub.loan_many_capacity());
    std::optional<ferry::RawLoanBatch> batch;
    std::size_t filled = 0;
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      if (!batch) {
        auto loaned = pub.loan_many(per_batch);
        if (!loaned) {
          report_error(control, fmt::format("{} publisher: loan_many failed: {}", name_,
                                            ferry::to_string(loaned.error())));
          return false;
        }
        batch.emplace(std::move(*loaned));
        filled = 0;
      }
      write_seq(batch->sample(filled++), seq);
      if (filled < per_batch && seq != kStopSeq) return true;
      batch->shrink(filled);
      (void)pub.publish_many(std::move(*batch));
      batch.reset();
      return true;
    });
    return ok ? 0 : 3;
  }

  static constexpr FerryPath kPath = FerryPath::Loan;
  std::string_view name_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_ferry_loan_throughput(std::string_view name) {
  return std::make_unique<FerryLoanThroughput>(name);
}

}  // namespace ferry::bench
