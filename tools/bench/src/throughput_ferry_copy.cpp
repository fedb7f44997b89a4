// ferry's copy path for throughput (ferry-copy, and ferry up to the inline
// limit): publish(const T&) of a T of the message size (raw ports on a
// topic of that opaque type take the same path), K subscribers.
#include <fmt/format.h>

#include <vector>

#include "bench_config.hpp"
#include "ferry_side.hpp"
#include "private_domain.hpp"
#include "stream_loops.hpp"
#include "throughput_ferry_side.hpp"
#include "throughput_transport.hpp"

namespace ferry::bench {

namespace {

class FerryCopyThroughput final : public ThroughputTransport {
 public:
  explicit FerryCopyThroughput(std::string_view name) : name_(name) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "publish(const T&) / {} of a T of the message size, policy block: copied into each "
        "queue's slot (up to 4 KiB), above once into a pool chunk",
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "publisher", plan.wait);
    ferry::RawPublisher pub =
        node.raw_publisher(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    if (!wait_matched([&] { return pub.subscriber_count() == plan.receivers; })) {
      report_error(
          control,
          fmt::format("{} publisher: ferryd did not match every subscriber within 10 s", name_));
      return 2;
    }
    std::vector<std::byte> msg(plan.size, std::byte{0x5a});
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      (void)pub.publish(msg);  // a queue still full at the deadline shows as a sequence gap
      return true;
    });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    ferry::Node node = join_domain(*plan.domain, fmt::format("subscriber{}", index), plan.wait);
    ferry::RawSubscriber sub =
        node.raw_subscriber(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    return receive_samples(sub, plan, control, index, name_);
  }

 private:
  static constexpr FerryPath kPath = FerryPath::Copy;
  std::string_view name_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_ferry_copy_throughput(std::string_view name) {
  return std::make_unique<FerryCopyThroughput>(name);
}

}  // namespace ferry::bench
