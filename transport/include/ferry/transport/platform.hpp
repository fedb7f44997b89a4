#pragma once
// Small platform facts the shared-memory layouts and spin loops rely on.

#include <cstddef>

namespace ferry::transport {

// One cache line, fixed. Not std::hardware_destructive_interference_size:
// that constant may differ between compilers (and flags) that must agree on
// one shared-memory layout.
inline constexpr std::size_t kCacheLine = 64;

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

}  // namespace ferry::transport
