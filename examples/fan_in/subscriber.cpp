// Takes the ticks of all sensors from sensors/ticks until each of
// --publishers publishers sent --count ticks, and checks what fan-in
// promises: each publisher's ticks arrive in its order, none missing, none
// twice, however the publishers interleave. A gap or a reordering is
// reported and ends it with exit code 1.
// Usage: fan_in_subscriber [publishers] [count]
#include <cstdio>
#include <ferry/ferry.hpp>
#include <map>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "fan_in_types.hpp"  // Tick: `ferry gen cpp fan_in.yaml` at build time

namespace {

constexpr const char* kUsage = "fan_in_subscriber [publishers] [count]";

int run(int argc, char** argv) {
  std::size_t publishers = 2;
  std::uint64_t count = 20;
  example::App app{"Takes the ticks of all publishers on sensors/ticks and checks their order",
                   "fan_in_subscriber"};
  app.add_option("publishers", publishers, "Publishers to wait for (default 2)")
      ->check(example::at_least(0));
  app.add_option("count", count, "Ticks from each publisher (default 20)")
      ->check(example::at_least(0));
  example::parse(app, argc, argv, kUsage);

  ferry::Node node{"fan_in_subscriber"};
  auto sub = node.subscriber<Tick>("sensors/ticks");

  std::map<std::uint64_t, std::uint64_t> next;  // publisher ID -> the seq expected next
  std::size_t complete = 0;                     // publishers that sent `count` ticks
  std::uint64_t received = 0;
  while (complete < publishers) {
    const auto tick = example::next_sample(sub, received,
                                           std::to_string(count) + " tick(s) from each of " +
                                               std::to_string(publishers) + " publisher(s)");
    ++received;
    auto& expected = next[tick->publisher];  // a new publisher starts at 0
    const std::string from = "publisher " + std::to_string(tick->publisher);
    if (tick->seq != expected) {
      example::fail(from + " sent tick " + std::to_string(tick->seq) + " after " +
                    (expected == 0 ? std::string("none") : std::to_string(expected - 1)) +
                    (tick->seq > expected ? ": " + std::to_string(tick->seq - expected) + " missing"
                                          : ": reordered or duplicated"));
    }
    ++expected;
    std::printf("subscriber: %s tick %llu\n", from.c_str(),
                static_cast<unsigned long long>(tick->seq));
    if (expected == count) ++complete;
  }
  for (const auto& [id, n] : next) {
    std::printf("subscriber: publisher %llu: %llu tick(s), in order\n",
                static_cast<unsigned long long>(id), static_cast<unsigned long long>(n));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("fan_in_subscriber", [&] { return run(argc, argv); });
}
