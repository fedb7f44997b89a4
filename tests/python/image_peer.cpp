// The C++ side of tests/python/test_images.py: sensor_msgs/msg/Image through
// the `ferry gen cpp` header, by loan. Usage:
//   image_peer pub TOPIC N   loans and publishes images 0..N-1 (image_pattern.hpp)
//                            once a subscriber matched, prints "published",
//                            then waits for a line on stdin (or 10 s)
//   image_peer sub TOPIC N   prints "ready", takes N images, prints one line
//                            per image: "ok" or what is wrong
// Exit 0 on success, 1 on a failure (said on stderr).
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ferry/ferry.hpp>
#include <string>
#include <thread>

#include "image_pattern.hpp"

namespace {

int pub(const std::string& topic, std::uint32_t n) {
  ferry::Node node{"image-pub"};
  auto p = node.publisher<sensor_msgs::msg::Image>(topic);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (p.subscriber_count() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (std::uint32_t i = 0; i < n; ++i) {
    auto loan = p.loan();
    if (!loan) {
      std::fprintf(stderr, "image_peer: loan failed\n");
      return 1;
    }
    if (!image_test::fill(**loan, i)) return 1;
    if (p.publish(std::move(*loan)).delivered != 1) {
      std::fprintf(stderr, "image_peer: image %u not delivered\n", i);
      return 1;
    }
  }
  std::printf("published\n");
  std::fflush(stdout);
  pollfd in{STDIN_FILENO, POLLIN, 0};
  (void)::poll(&in, 1, 10000);
  return 0;
}

int sub(const std::string& topic, std::uint32_t n) {
  ferry::Node node{"image-sub"};
  auto s = node.subscriber<sensor_msgs::msg::Image>(topic);
  std::printf("ready\n");
  std::fflush(stdout);
  int failures = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto sample = s.take(std::chrono::seconds(10));
    if (!sample) {
      std::printf("image %u not received\n", i);
      return 1;
    }
    const std::string problem = image_test::check(**sample, i);
    std::printf("%s\n", problem.empty() ? "ok" : problem.c_str());
    std::fflush(stdout);
    failures += problem.empty() ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: image_peer pub|sub TOPIC N\n");
    return 2;
  }
  const std::string mode = argv[1];
  const auto n = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  if (mode == "pub") return pub(argv[2], n);
  if (mode == "sub") return sub(argv[2], n);
  return 2;
}
