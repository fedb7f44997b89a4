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
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(10))) return 3;
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
