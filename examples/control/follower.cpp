// Follows the commands on robot/cmd like an actuator that needs --slow-ms
// to carry out each one, until the stop command. Commands come in the
// controller's order; a command the controller could not deliver (its
// publish timed out while this queue was full) is a gap in the sequence
// numbers, reported as skipped. The age printed with each command is how
// long it waited in the queue: why a controller does not want to block long.
// Usage: control_follower [--slow-ms N]
#include <chrono>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>
#include <thread>

#include "cli.hpp"
#include "control_types.hpp"  // Command: `ferry gen cpp control.yaml` at build time
#include "example.hpp"

namespace {

constexpr const char* kUsage = "control_follower [--slow-ms N]";

double age_ms(std::uint64_t stamp_ns) {
  return static_cast<double>(example::now_ns() - stamp_ns) / 1e6;
}

int run(int argc, char** argv) {
  unsigned slow_ms = 0;
  example::App app{"Follows the commands on robot/cmd until the stop command", "control_follower"};
  app.add_option("--slow-ms", slow_ms, "Milliseconds to carry out each command (default 0)")
      ->check(example::at_least(0));
  example::parse(app, argc, argv, kUsage);

  ferry::Node node{"control_follower"};
  auto sub = node.subscriber<Command>("robot/cmd");

  std::uint64_t received = 0;
  std::uint64_t skipped = 0;
  std::uint64_t next = 0;  // the sequence number expected next
  while (true) {
    const auto cmd = example::next_sample(sub, received, "more commands up to a stop command");
    const Command& c = *cmd;
    if (c.seq < next) {
      example::fail("command " + std::to_string(c.seq) + " arrived after command " +
                    std::to_string(next - 1) + ": order broken");
    }
    ++received;
    skipped += c.seq - next;
    std::printf("follower: command %llu speed %.2f steer %+.2f, age %.1f ms",
                static_cast<unsigned long long>(c.seq), c.speed, c.steer, age_ms(c.stamp_ns));
    if (c.seq > next) {
      std::printf(" (%llu skipped: timed out at the controller)",
                  static_cast<unsigned long long>(c.seq - next));
    }
    std::printf("\n");
    next = c.seq + 1;
    if (c.stop) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));  // carrying it out
  }
  std::printf("follower: stopped after %llu command(s) in order, %llu skipped by the controller\n",
              static_cast<unsigned long long>(received), static_cast<unsigned long long>(skipped));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("control_follower", [&] { return run(argc, argv); });
}
