// ferry-c: ferry-copy's path with the pinging side written against the C
// API (<ferry/ferry.h>, libferry_c): a C publisher to a C++ subscriber and
// a C++ publisher back to a C subscriber, so that `--transports
// ferry,ferry-c` shows what the C binding adds to each one-way trip. The
// echo side is ferry-copy's (C++ raw ports); the ping side does through C
// what ferry-copy's does through C++: ferry_publish of a sample of the
// message size (copied into the slot up to 4 KiB, above once into a pool
// chunk), ferry_take polled (spin) or ferry_take(timeout) with take_spin 0
// (sleep), ferry_sample_release.
#include <fmt/format.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "ferry/ferry.h"
#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

namespace {

// The ping side's C handles, destroyed in reverse order.
struct CPorts {
  ferry_node_t* node = nullptr;
  ferry_publisher_t* pub = nullptr;
  ferry_subscriber_t* sub = nullptr;
  CPorts() = default;
  CPorts(const CPorts&) = delete;
  CPorts& operator=(const CPorts&) = delete;
  ~CPorts() {
    ferry_subscriber_destroy(sub);
    ferry_publisher_destroy(pub);
    ferry_node_destroy(node);
  }
};

constexpr FerryPath kPath = FerryPath::Copy;

class FerryCLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kFerryC; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "ferry-copy with the ping side in C (libferry_c): ferry_publish / {}, "
        "ferry_sample_release; the echo side C++",
        wait == Wait::Spin ? "ferry_take(0) polled"
                           : "ferry_take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    const std::string who = "ferry-c ping";
    plan.domain->enter();  // FERRY_DOMAIN and FERRY_RUNTIME_DIR: where ferry_node_create goes
    CPorts c;
    const std::string type = bench_blob_type(plan.size);
    const std::string ping = slot_topic(latency_ping_topic(plan.size, kPath), plan.run);
    const std::string pong = slot_topic(latency_pong_topic(plan.size, kPath), plan.run);
    const std::string node = fmt::format("bench-ping-c-{}", ::getpid());
    if (ferry_node_create(node.c_str(), plan.domain->name().c_str(), &c.node) != FERRY_OK ||
        ferry_publisher_create(c.node, ping.c_str(), type.c_str(), plan.size, 1, &c.pub) !=
            FERRY_OK ||
        ferry_subscriber_create(c.node, pong.c_str(), type.c_str(), plan.size, 1, &c.sub) !=
            FERRY_OK ||
        ferry_subscriber_set_take_spin(c.sub, plan.wait == Wait::Sleep ? 0 : 1024) != FERRY_OK) {
      report_error(control, who + ": " + ferry_last_error());
      return 2;
    }
    if (!wait_matched([&] {
          return ferry_publisher_subscriber_count(c.pub) == 1 &&
                 ferry_subscriber_publisher_count(c.sub) == 1;
        })) {
      report_error(control, who + ": ferryd did not match the echo side within 10 s");
      return 2;
    }
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, who + ": the echo side did not start");
      return 2;
    }
    std::vector<std::byte> msg(plan.size, std::byte{0x5a});
    auto send = [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      ferry_publish_result_t r;
      if (ferry_publish(c.pub, msg.data(), msg.size(), &r) != FERRY_OK || r.delivered == 0) {
        report_error(control, who + ": publish reached no subscriber");
        return false;
      }
      return true;
    };
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!send(seq)) return false;
      ferry_sample_t* s = nullptr;
      if (plan.wait == Wait::Sleep) {
        (void)ferry_take(c.sub, kPeerTimeoutNs, &s);
      } else {
        // Inline, as ferry-copy's poll loop (ferry_side.hpp): the C call is
        // what is measured.
        (void)spin_until(
            [&]() __attribute__((always_inline)) {
              return ferry_take(c.sub, 0, &s) != FERRY_OK || s != nullptr;
            },
            kPeerTimeoutNs);
      }
      if (s == nullptr) {
        report_error(control, who + ": no answer to " + std::to_string(seq) + " (" +
                                  ferry_last_error() + ")");
        return false;
      }
      const bool right = ferry_sample_size(s) == plan.size &&
                         read_seq(static_cast<const std::byte*>(ferry_sample_data(s))) == seq;
      (void)ferry_sample_release(s);
      if (!right) report_error(control, fmt::format("{}: bad answer to {}", who, seq));
      return right;
    });
    (void)send(kStopSeq);
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  // The echo side is ferry-copy's, in C++.
  int echo(const LatencyPlan& plan, RunControl& control) override {
    return echo_->echo(plan, control);
  }

 private:
  std::unique_ptr<LatencyTransport> echo_ = make_ferry_copy_latency(kFerryC);
};

}  // namespace

std::unique_ptr<LatencyTransport> make_ferry_c_latency() {
  return std::make_unique<FerryCLatency>();
}

}  // namespace ferry::bench
