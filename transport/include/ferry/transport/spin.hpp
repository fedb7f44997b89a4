#pragma once
// Spinning: pausing the CPU between two polls of a shared line.

#include <cstdint>

namespace ferry::transport {

// Tells the CPU we are spinning (lowers power, frees the sibling hyperthread,
// avoids the memory-order pipeline flush when the awaited line changes).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

// One step of a spin-wait: about kSpinStepNs of cpu_relax() between two
// polls of a shared line. Polling the line the peer is about to write on
// every pause slows the peer's write (each poll pulls the line back); on the
// 2-vCPU Xeon VM ferry-bench-ring measured, one poll per ~16 ns pause vs one
// per ~130 ns: ring throughput ~10.5 -> ~13.5 M msg/s and one-way p50
// ~270 -> ~210 ns. PAUSE costs ~10 cycles on older x86 and ~140 on Skylake
// and later, so the number of pauses per step is measured once per process.
inline constexpr std::int64_t kSpinStepNs = 120;
[[nodiscard]] std::uint32_t pauses_per_spin_step() noexcept;

inline void spin_wait_step() noexcept {
  static const std::uint32_t pauses = pauses_per_spin_step();
  for (std::uint32_t i = 0; i < pauses; ++i) cpu_relax();
}

}  // namespace ferry::transport
