// Sends velocity commands on robot/cmd (policy block, block_timeout_ms 20):
// --count commands at --rate Hz, the last one a stop. Each publish() says
// what became of the command; when a follower's queue stayed full for the
// whole block_timeout_ms (PublishResult::timed_out), that follower did not
// get the command, so the controller logs it and drops to a safe rate that
// a slow follower can keep up with. The stop command must arrive: it is
// sent again until it does (a few times at most).
// Usage: control_publisher [count] [rate_hz]
#include <spdlog/spdlog.h>

#include <cmath>
#include <ferry/ferry.hpp>

#include "cli.hpp"
#include "control_types.hpp"  // Command: `ferry gen cpp control.yaml` at build time
#include "example.hpp"

namespace {

constexpr const char* kUsage = "control_publisher [count] [rate_hz]";
// The rate the controller falls back to once a follower falls behind. A
// real controller would take the rate its slowest actuator sustains.
constexpr double kSafeRateHz = 10.0;
constexpr int kStopAttempts = 10;

int run(int argc, char** argv) {
  std::uint64_t count = 50;
  double rate_hz = 100.0;
  example::App app{"Sends velocity commands on robot/cmd, the last one a stop",
                   "control_publisher"};
  // At least 1: the last command is the stop command.
  app.add_option("count", count, "Commands to send (default 50)")->check(example::at_least(1));
  app.add_option("rate_hz", rate_hz, "Commands per second (default 100)")->check(example::rate());
  example::parse(app, argc, argv, kUsage);
  spdlog::set_pattern("control_publisher: %^%l%$: %v");

  ferry::Node node{"control_publisher"};
  auto pub = node.publisher<Command>("robot/cmd");
  if (!example::wait_for_subscriber(pub)) {
    example::fail("no follower on robot/cmd within 10 s; start control_follower");
  }
  spdlog::info("{} follower(s), sending {} command(s) at {} Hz", pub.subscriber_count(), count,
               rate_hz);

  std::uint64_t delivered = 0;  // commands every follower got
  std::uint64_t timed_out = 0;  // commands some follower did not get
  example::Pacer pacer(rate_hz);
  for (std::uint64_t i = 0; i < count; ++i) {
    const bool stop = i + 1 == count;
    Command cmd{i, 0, stop ? 0.0 : 0.5 + 0.5 * std::sin(static_cast<double>(i) * 0.2),
                stop ? 0.0 : 0.3 * std::cos(static_cast<double>(i) * 0.2), stop};
    cmd.stamp_ns = example::now_ns();
    // publish() waits up to block_timeout_ms for room in every follower's
    // queue; a follower still full then does not get this command, and
    // r.timed_out counts it: nothing is lost silently.
    ferry::PublishResult r = pub.publish(cmd);
    // The stop command must arrive: sent again while it times out.
    for (int attempt = 1; stop && r.timed_out > 0 && attempt < kStopAttempts; ++attempt) {
      spdlog::warn("stop command timed out at {} follower(s), sending it again", r.timed_out);
      cmd.stamp_ns = example::now_ns();
      r = pub.publish(cmd);
    }
    if (r.timed_out > 0) {
      ++timed_out;
      if (stop) example::fail(fmt::format("the stop command timed out {} times", kStopAttempts));
      if (rate_hz > kSafeRateHz) {
        spdlog::warn(
            "command {} timed out at {} follower(s) after block_timeout_ms: "
            "dropping from {} Hz to the safe rate {} Hz",
            i, r.timed_out, rate_hz, kSafeRateHz);
        rate_hz = kSafeRateHz;
        pacer.set_rate(rate_hz);
      } else {
        spdlog::warn("command {} timed out at {} follower(s), even at {} Hz", i, r.timed_out,
                     rate_hz);
      }
    } else if (r.delivered == 0) {
      example::fail(fmt::format("the follower left robot/cmd before command {}", i));
    }
    if (r.timed_out == 0) ++delivered;
    pacer.wait();
  }
  spdlog::info("sent {} command(s): {} delivered, {} timed out; final rate {} Hz", count, delivered,
               timed_out, rate_hz);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("control_publisher", [&] { return run(argc, argv); });
}
