#pragma once
// The machine a benchmark ran on (recorded with every result), and CPU pinning.

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::bench {

struct Machine {
  std::string cpu = "unknown CPU";  // /proc/cpuinfo "model name"
  long cores = 0;                   // CPUs online
  std::string kernel;               // "Linux 6.1.0-..."
  std::string compiler;             // "g++ 12.2.0"
  std::string clocksource;          // tsc, hpet, kvm-clock ...
};

[[nodiscard]] Machine describe_machine();

// "Intel(R) Xeon(R) ..., 2 CPUs, Linux 6.1, clocksource tsc, g++ 12.2.0"
[[nodiscard]] std::string to_string(const Machine& machine);

// CPUs this process may run on (sched_getaffinity), ascending.
[[nodiscard]] std::vector<int> allowed_cpus();

// Pins the calling thread (and the threads it creates later) to one CPU.
bool pin_to_cpu(int cpu) noexcept;

// While alive, the calling thread may run on any CPU, and so may the threads
// it creates meanwhile; at its end the thread is pinned back to the one CPU
// it was pinned to, if it was. A comparator's side (Fast DDS, Cyclone DDS)
// creates its library's threads in one: they carry its samples but are not
// the side being measured, and held on the side's own CPU they would wait
// for it (with --cpus; docs/benchmarks.md).
class UnpinnedScope {
 public:
  UnpinnedScope() noexcept;
  ~UnpinnedScope();
  UnpinnedScope(const UnpinnedScope&) = delete;
  UnpinnedScope& operator=(const UnpinnedScope&) = delete;

 private:
  int cpu_ = -1;  // the CPU to pin back to; -1: the thread was not pinned
};

// The cost of one now_ns() call, measured (each latency sample includes one).
[[nodiscard]] std::int64_t clock_read_cost_ns();

// The spin loops' polling period (spin_until: a poll, then
// transport::spin_wait_step()): its pauses, and how long they take,
// measured. A spinning side sees a message up to one step after it lands,
// so on a slow PAUSE the latency p50s fall on steps of about half of it.
struct SpinStep {
  std::uint32_t pauses = 0;
  std::int64_t ns = 0;
};
[[nodiscard]] SpinStep spin_step();

}  // namespace ferry::bench
