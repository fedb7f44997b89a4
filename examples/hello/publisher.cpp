// Publishes poses on robot/pose: waits for a subscriber, then sends --count
// samples at --rate Hz. Usage: hello_publisher [count] [rate_hz]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ferry/ferry.hpp>
#include <thread>

#include "cli.hpp"
#include "hello_types.hpp"  // Pose: `ferry gen cpp hello.yaml` at build time

int main(int argc, char** argv) try {
  int count = 20;
  double rate_hz = 10.0;
  example::App app{"Publishes poses on robot/pose", "hello_publisher"};
  app.add_option("count", count, "Poses to send (default 20)")->check(example::at_least(0));
  app.add_option("rate_hz", rate_hz, "Poses per second (default 10)")->check(example::rate());
  example::parse(app, argc, argv, "hello_publisher [count] [rate_hz]");

  ferry::Node node{"hello_publisher"};
  auto pub = node.publisher<Pose>("robot/pose");

  (void)pub.wait_for_subscribers(1, std::chrono::seconds(10));
  std::printf("publisher: %u subscriber(s) matched\n", pub.subscriber_count());

  const auto period = std::chrono::duration<double>(1.0 / rate_hz);
  for (int i = 0; i < count; ++i) {
    Pose pose{};
    pose.stamp_ns =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    pose.x = std::cos(i * 0.1);
    pose.y = std::sin(i * 0.1);
    std::strncpy(pose.frame, "map", sizeof pose.frame);
    const ferry::PublishResult r = pub.publish(pose);
    std::printf("publisher: sample %d delivered to %u queue(s)\n", i, r.delivered);
    std::this_thread::sleep_for(period);
  }
  return 0;
} catch (const ferry::Error& e) {
  std::fprintf(stderr, "hello_publisher: %s\n", e.what());
  return 1;
}
