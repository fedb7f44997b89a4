#include "ferry/bench/machine.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "ferry/bench/clock.hpp"
#include "ferry/transport/spin.hpp"

namespace ferry::bench {

Machine describe_machine() {
  Machine m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) m.cpu = line.substr(colon + 2);
      break;
    }
  }
  m.cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  utsname u{};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release;
#if defined(__clang__)
  m.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  m.compiler = "g++ " __VERSION__;
#endif
  std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::getline(cs, m.clocksource);
  return m;
}

std::string to_string(const Machine& m) {
  return fmt::format("{}, {} CPUs, {}, clocksource {}, {}", m.cpu, m.cores, m.kernel,
                     m.clocksource.empty() ? "unknown" : m.clocksource, m.compiler);
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

bool pin_to_cpu(int cpu) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

UnpinnedScope::UnpinnedScope() noexcept {
  const std::vector<int> now = allowed_cpus();
  if (now.size() != 1) return;  // not pinned: nothing to undo
  cpu_ = now.front();
  // Every CPU the machine has; the kernel keeps the ones our cgroup allows.
  const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (long c = 0; c < std::min<long>(configured, CPU_SETSIZE); ++c) CPU_SET(c, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) cpu_ = -1;  // still pinned: keep it
}

UnpinnedScope::~UnpinnedScope() {
  if (cpu_ >= 0) (void)pin_to_cpu(cpu_);
}

SpinStep spin_step() {
  SpinStep step;
  step.pauses = transport::pauses_per_spin_step();
  // The fastest of a few rounds of 64 steps: a preemption only slows one.
  constexpr int kSteps = 64;
  std::int64_t best = INT64_MAX;
  for (int round = 0; round < 5; ++round) {
    const std::int64_t t0 = now_ns();
    for (int i = 0; i < kSteps; ++i) transport::spin_wait_step();
    best = std::min(best, now_ns() - t0);
  }
  step.ns = best / kSteps;
  return step;
}

std::int64_t clock_read_cost_ns() {
  constexpr int kN = 200'000;
  const std::int64_t t0 = now_ns();
  volatile std::int64_t sink = 0;
  for (int i = 0; i < kN; ++i) sink = now_ns();
  return (sink - t0) / kN;
}

}  // namespace ferry::bench
