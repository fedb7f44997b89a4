#pragma once
// Small platform facts the shared-memory layouts and the hot path rely on
// (spin loops: spin.hpp).

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

}  // namespace ferry::transport
