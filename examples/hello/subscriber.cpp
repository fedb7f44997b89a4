// Prints poses taken from robot/pose until --count arrived or none came for
// two seconds. Usage: hello_subscriber [count]
#include <chrono>
#include <cstdio>
#include <ferry/ferry.hpp>

#include "cli.hpp"
#include "hello_types.hpp"  // Pose: `ferry gen cpp hello.yaml` at build time

int main(int argc, char** argv) try {
  int count = 20;
  example::App app{"Prints the poses of robot/pose", "hello_subscriber"};
  app.add_option("count", count, "Poses to wait for (default 20)")->check(example::at_least(0));
  example::parse(app, argc, argv, "hello_subscriber [count]");

  ferry::Node node{"hello_subscriber"};
  auto sub = node.subscriber<Pose>("robot/pose");

  int received = 0;
  while (received < count) {
    auto sample = sub.take(std::chrono::seconds(2));
    if (!sample) {
      std::printf("subscriber: nothing for 2 s, stopping\n");
      break;
    }
    ++received;
    std::printf("subscriber: x=%+.3f y=%+.3f frame=%.16s\n", (*sample)->x, (*sample)->y,
                (*sample)->frame);
  }
  std::printf("subscriber: received %d sample(s)\n", received);
  return received == count ? 0 : 1;
} catch (const ferry::Error& e) {
  std::fprintf(stderr, "hello_subscriber: %s\n", e.what());
  return 1;
}
