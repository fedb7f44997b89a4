// The fusion node's inputs from one process: poses at 100 Hz, an image
// (loaned, zero copy) every 10th pose, a command every 20th, and after
// `seconds` a stop command.
// Usage: fusion_sensors [seconds] [subscribers]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cli.hpp"
#include "example.hpp"
#include "inputs.hpp"

namespace {

int run(int argc, char** argv) {
  unsigned seconds = 2;
  unsigned subscribers = 1;
  example::App app{"Publishes poses, commands and images for the fusion node", "fusion_sensors"};
  app.add_option("seconds", seconds, "How long to publish (default 2)")
      ->check(example::at_least(1));
  app.add_option("subscribers", subscribers,
                 "Fusion nodes to wait for before publishing (default 1)")
      ->check(example::at_least(1));
  example::parse(app, argc, argv, "fusion_sensors [seconds] [subscribers]");

  ferry::Node node{"fusion_sensors"};
  auto poses = node.publisher<Pose>("robot/pose");
  auto commands = node.publisher<Command>("robot/cmd");
  auto images = node.publisher<Image>("camera/image");
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const auto left = [&] { return give_up - std::chrono::steady_clock::now(); };
  if (!commands.wait_for_subscribers(subscribers, left()) ||
      !images.wait_for_subscribers(subscribers, left())) {
    example::fail("fewer than " + std::to_string(subscribers) + " fusion node(s) within 10 s");
  }

  example::Pacer pacer(100.0);
  const std::uint64_t rounds = 100ULL * seconds;
  std::uint64_t sent_commands = 0;
  for (std::uint64_t i = 0; i < rounds; ++i) {
    const double t = static_cast<double>(i) / 100.0;
    poses.publish(Pose{example::now_ns(), std::cos(t), std::sin(t), t});
    if (i % 10 == 0) {
      auto loan = images.loan();
      if (loan) {
        Image& image = **loan;
        image.stamp_ns = example::now_ns();
        image.seq = i / 10;
        std::memset(image.pixels, static_cast<int>(i & 0xff), sizeof image.pixels);
        images.publish(std::move(*loan));
      }
    }
    if (i % 20 == 0) {
      const auto r = commands.publish(
          Command{sent_commands++, 0.5 + 0.01 * static_cast<double>(i % 7), false});
      if (r.delivered == 0)
        example::fail("command " + std::to_string(sent_commands - 1) + " was not delivered");
    }
    pacer.wait();
  }
  commands.publish(Command{sent_commands++, 0.0, true});
  std::printf("fusion_sensors: %llu poses, %llu commands (the last one stop)\n",
              static_cast<unsigned long long>(rounds),
              static_cast<unsigned long long>(sent_commands));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("fusion_sensors", [&] { return run(argc, argv); });
}
