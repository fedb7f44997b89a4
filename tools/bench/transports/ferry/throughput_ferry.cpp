// ferry's throughput as a user of the full API gets it at each size:
// publish(const T&) / take() while the sample fits a ring slot (copied into
// each queue's slot), loan / publish / take above (zero copy). ferry-copy and
// ferry-loan measure one path at every size.
#include <fmt/format.h>

#include "harness/bench_config.hpp"
#include "throughput/throughput_transport.hpp"

namespace ferry::bench {

namespace {

class FerryThroughput final : public ThroughputTransport {
 public:
  FerryThroughput()
      : copy_(make_ferry_copy_throughput(kFerry)), loan_(make_ferry_loan_throughput(kFerry)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return kFerry; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "up to {} B publish(const T&) / {} (copied into each queue's slot), above loan(n) / "
        "publish (zero copy); policy block, each subscriber its own queue",
        config::kMaxInlineSample,
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }
  // The orchestrator calls prepare() first for every run: it picks the path.
  void prepare(const ThroughputPlan& plan) override {
    current_ = &side(plan);
    current_->prepare(plan);
  }
  void after_spawn() override { current_->after_spawn(); }
  void finish() override { current_->finish(); }
  int send(const ThroughputPlan& plan, RunControl& control) override {
    return side(plan).send(plan, control);
  }
  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    return side(plan).receive(plan, control, index);
  }

 private:
  [[nodiscard]] ThroughputTransport& side(const ThroughputPlan& plan) const {
    return ferry_path(plan.size) == FerryPath::Copy ? *copy_ : *loan_;
  }
  std::unique_ptr<ThroughputTransport> copy_;
  std::unique_ptr<ThroughputTransport> loan_;
  ThroughputTransport* current_ = nullptr;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_ferry_throughput() {
  return std::make_unique<FerryThroughput>();
}

}  // namespace ferry::bench
