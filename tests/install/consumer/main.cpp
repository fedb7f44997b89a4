// Publishes one Ping to itself through the domain's ferryd (FERRY_DOMAIN)
// and prints what it took; exit code 0 when it came back intact.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <thread>

struct Ping {
  std::uint64_t n;
  double value;
};
FERRY_TYPE(Ping);

int main() {
  try {
    ferry::Node node{"consumer"};
    auto pub = node.publisher<Ping>("ping");
    auto sub = node.subscriber<Ping>("ping");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pub.subscriber_count() != 1) {
      if (std::chrono::steady_clock::now() > deadline) return 3;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const ferry::PublishResult r = pub.publish(Ping{42, 2.5});
    const auto s = sub.take(std::chrono::seconds(10));
    if (r.delivered != 1 || !s) return 1;
    std::printf("consumer took %llu %.2f\n", static_cast<unsigned long long>((*s)->n), (*s)->value);
    return (*s)->n == 42 && (*s)->value == 2.5 ? 0 : 1;
  } catch (const ferry::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 2;
  }
}
