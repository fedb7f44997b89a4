// One of the sensors of the fan_in example: publishes --count ticks
// numbered 0, 1, 2... at --rate Hz on sensors/ticks, each marked with this
// publisher's ID. Run it twice with two IDs.
// Usage: fan_in_publisher ID [count] [rate_hz]
#include <cmath>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "fan_in_types.hpp"  // Tick: `ferry gen cpp fan_in.yaml` at build time

namespace {

constexpr const char* kUsage = "fan_in_publisher ID [count] [rate_hz]";

int run(int argc, char** argv) {
  std::uint64_t id = 0;
  std::uint64_t count = 20;
  double rate_hz = 10.0;
  example::App app{"Publishes ticks on sensors/ticks, each marked with this publisher's ID",
                   "fan_in_publisher"};
  app.add_option("ID", id, "This publisher's ID")->required()->check(example::at_least(0));
  app.add_option("count", count, "Ticks to publish (default 20)")->check(example::at_least(0));
  app.add_option("rate_hz", rate_hz, "Ticks per second (default 10)")->check(example::rate());
  example::parse(app, argc, argv, kUsage);
  const std::string name = "fan_in_publisher_" + std::to_string(id);

  ferry::Node node{name};
  auto pub = node.publisher<Tick>("sensors/ticks");
  if (!example::wait_for_subscriber(pub)) {
    example::fail("no subscriber on sensors/ticks within 10 s; start fan_in_subscriber");
  }

  example::Pacer pacer(rate_hz);
  for (std::uint64_t i = 0; i < count; ++i) {
    const ferry::PublishResult r = pub.publish(Tick{id, i, std::sin(static_cast<double>(i) * 0.1)});
    // block: a queue still full after block_timeout_ms did not take the
    // tick, and the subscriber would see a gap; say so and stop.
    if (r.timed_out > 0) {
      example::fail("tick " + std::to_string(i) + " timed out: the subscriber's queue stayed full");
    }
    if (r.delivered == 0) example::fail("the subscriber left before tick " + std::to_string(i));
    pacer.wait();
  }
  std::printf("%s: published %llu tick(s)\n", name.c_str(), static_cast<unsigned long long>(count));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("fan_in_publisher", [&] { return run(argc, argv); });
}
