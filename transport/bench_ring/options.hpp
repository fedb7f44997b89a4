#pragma once
// ferry-bench-ring's command line: what to run, how long, and how to report.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::bench_ring {

// The rings every run uses: one message per 64-byte slot.
inline constexpr std::uint32_t kSlotSize = 64;
// The ring slot holding one: the slot header (32 bytes with the sample
// metadata) and the message, in whole cache lines.
inline constexpr std::uint32_t kRingSlotSize = 128;
inline constexpr std::uint32_t kCapacity = 1024;

// The transports --only accepts (throughput and latency cases together).
inline constexpr std::array<std::string_view, 6> kTransports = {
    "raw-ring", "raw-ring-batch", "raw-ring-futex", "raw-ring-sleep", "unix-socket", "pipe"};

struct Options {
  int repeat = 5;
  int cpu_a = 0;
  int cpu_b = 1;
  bool json = false;
  std::uint32_t size = kSlotSize - 8;        // payload bytes: a message fills one 64-byte slot
  std::uint64_t ring_messages = 5'000'000;   // throughput, ring transports
  std::uint64_t syscall_messages = 400'000;  // throughput, socket and pipe
  std::uint64_t spin_rounds = 200'000;       // latency, transports that usually do not sleep
  std::uint64_t sleep_rounds = 20'000;       // latency, transports that sleep every message
  std::vector<std::string> only;             // run only these transports (empty: all)
};

// Parses argv. --help prints the usage on stdout and exits 0; a bad flag or
// value prints one line on stderr and exits 2.
[[nodiscard]] Options parse_options(int argc, char** argv);

}  // namespace ferry::bench_ring
