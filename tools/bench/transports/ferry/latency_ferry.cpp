// ferry's latency as a user of the full API gets it at each size: samples
// that fit a ring slot (up to config::kMaxInlineSample) go by
// publish(const T&) / take(), copied into the slot and out of it, which is
// what ferry does for small samples; larger ones by loan / publish / take,
// zero copy. ferry-copy and ferry-loan measure one path at every size.
#include <fmt/format.h>

#include "harness/bench_config.hpp"
#include "latency/latency_transport.hpp"

namespace ferry::bench {

namespace {

class FerryLatency final : public LatencyTransport {
 public:
  FerryLatency() : copy_(make_ferry_copy_latency(kFerry)), loan_(make_ferry_loan_latency(kFerry)) {}
  [[nodiscard]] std::string_view name() const noexcept override { return kFerry; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "up to {} B publish(const T&) / {} (copied into the slot), above loan(n) / publish (zero "
        "copy); policy block",
        config::kMaxInlineSample,
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }
  // The orchestrator calls prepare() first for every run: it picks the path.
  void prepare(const LatencyPlan& plan) override {
    current_ = &side(plan);
    current_->prepare(plan);
  }
  void after_spawn() override { current_->after_spawn(); }
  void finish() override { current_->finish(); }
  int ping(const LatencyPlan& plan, RunControl& control) override {
    return side(plan).ping(plan, control);
  }
  int echo(const LatencyPlan& plan, RunControl& control) override {
    return side(plan).echo(plan, control);
  }

 private:
  [[nodiscard]] LatencyTransport& side(const LatencyPlan& plan) const {
    return ferry_path(plan.size) == FerryPath::Copy ? *copy_ : *loan_;
  }
  std::unique_ptr<LatencyTransport> copy_;
  std::unique_ptr<LatencyTransport> loan_;
  LatencyTransport* current_ = nullptr;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_ferry_latency() { return std::make_unique<FerryLatency>(); }

}  // namespace ferry::bench
