// ferry's copy path for throughput (ferry-copy, and ferry up to the inline
// limit): publish(const T&) of a T of the message size (raw ports on a
// topic of that opaque type take the same path), K subscribers.
#include <fmt/format.h>

#include <vector>

#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/ferry/ferry_side.hpp"
#include "transports/ferry/throughput_ferry_side.hpp"

namespace ferry::bench {

namespace {

class FerryCopyThroughput final : public ThroughputTransport {
 public:
  explicit FerryCopyThroughput(std::string_view name) : name_(name) {}
  [[nodiscard]] std::string_view name() const noexcept override { return name_; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "publish(const T&) / {} of a T of the message size, policy block: copied into each "
        "queue's slot (up to 4 KiB), above once into a pool chunk; with --batch N, "
        "publish_many / take_many of N",
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    ferry::Node node = join_domain(*plan.domain, "publisher", plan.wait);
    ferry::RawPublisher pub =
        node.raw_publisher(slot_topic(throughput_topic(plan.size, kPath), plan.run));
    if (!publisher_matched(pub, plan, control, name_)) return 2;
    if (plan.batch > 1) return send_batches(plan, control, pub);
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
    if (plan.batch > 1) return receive_batches(sub, plan, control, index, name_);
    return receive_samples(sub, plan, control, index, name_);
  }

 private:
  // --batch N: publish_many of N samples (the stop message ends the last,
  // shorter one); a queue still full at the deadline shows as a gap.
  int send_batches(const ThroughputPlan& plan, RunControl& control, ferry::RawPublisher& pub) {
    BatchWriter batch(plan.size, plan.batch);
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      return batch.add(
          seq, [](std::byte* slot, std::uint64_t s) { write_seq(slot, s); },
          [&](std::span<const std::byte> bytes, std::uint32_t) {
            (void)pub.publish_many(bytes);
            return true;
          });
    });
    return ok ? 0 : 3;
  }
  static constexpr FerryPath kPath = FerryPath::Copy;
  std::string_view name_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_ferry_copy_throughput(std::string_view name) {
  return std::make_unique<FerryCopyThroughput>(name);
}

}  // namespace ferry::bench
