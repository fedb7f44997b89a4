#pragma once
// Small platform facts the shared-memory layouts and spin loops rely on.

#include <cstddef>
#include <cstdint>

namespace ferry::transport {

// One cache line, fixed. Not std::hardware_destructive_interference_size:
// that constant may differ between compilers (and flags) that must agree on
// one shared-memory layout.
inline constexpr std::size_t kCacheLine = 64;

// Inlined into the caller whatever the compiler's size heuristics say. For
// the hot path of a port with one queue, where an out-of-line call was
// measured to cost far more than its instructions (ferry/detail/lane.hpp).
#define FERRY_HOT [[gnu::always_inline]]

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

// Starts taking the cache line at `p` for writing (exclusive: other cores'
// copies are invalidated) without waiting for it, so that a store to it a
// little later finds the line owned. A hint: it never faults, on any
// address, and orders nothing.
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  // PREFETCHW (0F 0D /1). GCC emits it for __builtin_prefetch(p, 1) only
  // with -mprfchw, and otherwise a read prefetch, which leaves the line
  // shared. x86-64 CPUs that predate the instruction execute it as a NOP.
  asm volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
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
