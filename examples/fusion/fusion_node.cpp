// One node, three inputs and a timer on a ferry::Executor: poses (100 Hz),
// commands (block: every one, in order), camera images (loaned: zero copy)
// and a 50 Hz control loop on absolute deadlines. It sleeps in one WaitSet
// between them and ends on the stop command, SIGINT or SIGTERM.
// Usage: fusion_node
#include <chrono>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "inputs.hpp"

namespace {

int run(int argc, char** argv) {
  example::App app{"Fuses poses, commands and images on one thread with a 50 Hz control loop",
                   "fusion_node"};
  example::parse(app, argc, argv, "fusion_node");

  ferry::Node node{"fusion_node"};
  auto poses = node.subscriber<Pose>("robot/pose");
  auto commands = node.subscriber<Command>("robot/cmd");
  auto images = node.subscriber<Image>("camera/image");

  Pose pose{};
  double speed = 0.0;
  std::uint64_t pose_count = 0;
  std::uint64_t image_count = 0;
  std::uint64_t command_count = 0;
  std::uint64_t next_command = 0;
  std::uint64_t control_ticks = 0;
  std::uint64_t missed_ticks = 0;

  ferry::Executor exec;
  exec.on(poses, [&](const ferry::Sample<Pose>& s) {
    pose = *s;
    ++pose_count;
  });
  exec.on(commands, [&](const ferry::Sample<Command>& s) {
    if (s->seq != next_command) {
      example::fail("command " + std::to_string(s->seq) + " came when " +
                    std::to_string(next_command) + " was due: order broken");
    }
    ++next_command;
    ++command_count;
    speed = s->speed;
    if (s->stop) exec.stop();
  });
  exec.on(images, [&](const ferry::Sample<Image>& s) {
    image_count +=
        s->pixels[0] == s->pixels[sizeof s->pixels - 1] ? 1 : 0;  // read in place, no copy
  });
  exec.every(std::chrono::milliseconds(20), [&](const ferry::Tick& tick) {
    ++control_ticks;
    missed_ticks += tick.missed;
    (void)(pose.x * speed);  // the control law would go here
  });
  exec.stop_on_signals();
  exec.spin();
  std::printf(
      "fusion_node: %llu poses, %llu commands in order, %llu images, %llu control ticks (%llu "
      "missed)\n",
      static_cast<unsigned long long>(pose_count), static_cast<unsigned long long>(command_count),
      static_cast<unsigned long long>(image_count), static_cast<unsigned long long>(control_ticks),
      static_cast<unsigned long long>(missed_ticks));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("fusion_node", [&] { return run(argc, argv); });
}
