// Publishes --count log lines of varying size (48 B to 64 KiB) at --rate Hz
// on logs/text, a `type: bytes` topic: each line is written straight into a
// loan of exactly its size from the shared pool, then published without a
// copy.
// Usage: log_publisher [count] [rate_hz]
#include <cstdio>
#include <cstring>
#include <ferry/ferry.hpp>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "log_line.hpp"

namespace {

constexpr const char* kUsage = "log_publisher [count] [rate_hz]";

int run(int argc, char** argv) {
  std::uint64_t count = 18;
  double rate_hz = 10.0;
  example::App app{"Publishes log lines of 48 B to 64 KiB on logs/text", "log_publisher"};
  app.add_option("count", count, "Lines to publish (default 18)")->check(example::at_least(0));
  app.add_option("rate_hz", rate_hz, "Lines per second (default 10)")->check(example::rate());
  example::parse(app, argc, argv, kUsage);

  ferry::Node node{"log_publisher"};
  auto pub = node.publisher<ferry::Bytes>("logs/text");
  if (!example::wait_for_subscriber(pub))
    example::fail("no subscriber on logs/text within 10 s; start log_tail");

  example::Pacer pacer(rate_hz);
  std::uint64_t bytes = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string line = log_line(i);
    // A loan of line.size() bytes: more than max_size would be TooLarge, an
    // empty pool PoolExhausted; values, not exceptions.
    auto loan = pub.loan(line.size());
    if (!loan)
      example::fail("no loan for line " + std::to_string(i) + ": " +
                    ferry::to_string(loan.error()));
    std::memcpy((*loan)->data(), line.data(), line.size());
    const ferry::PublishResult r = pub.publish(std::move(*loan));
    if (r.timed_out > 0)
      example::fail("line " + std::to_string(i) + " timed out: the tail's queue stayed full");
    if (r.delivered == 0) example::fail("the tail left before line " + std::to_string(i));
    bytes += line.size();
    pacer.wait();
  }
  std::printf("log_publisher: published %llu line(s), %llu bytes\n",
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(bytes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("log_publisher", [&] { return run(argc, argv); });
}
