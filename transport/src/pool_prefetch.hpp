#pragma once
// Private to the pool: fetching a payload line ahead of its use.

#include <cstddef>

namespace ferry::transport::detail {

// The line at p, fetched ahead: for writing with PREFETCHW (a NOP on cores
// without it), so that our store finds the line ours.
inline void prefetch_line(const void* p, bool for_write) noexcept {
#if defined(__x86_64__)
  if (for_write) {
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
    return;
  }
#endif
  (void)for_write;
  __builtin_prefetch(p);  // elsewhere a read prefetch still brings the line near
}

// How many lines of a payload's head are fetched ahead: a message's header
// usually spans several (a sensor_msgs/msg/Image's fields up to its data's
// first bytes are three), and they are written or read one after another.
// Fetched together, their transfers from the peer's core overlap instead of
// following each other.
inline constexpr std::size_t kPrefetchHeadLines = 4;

// The first lines of the payload at `p` (`size` bytes), fetched ahead.
inline void prefetch_head(const std::byte* p, std::size_t size, bool for_write) noexcept {
  constexpr std::size_t kLine = 64;
  const std::size_t lines =
      size < kPrefetchHeadLines * kLine ? (size + kLine - 1) / kLine : kPrefetchHeadLines;
  for (std::size_t k = 0; k < lines; ++k) prefetch_line(p + k * kLine, for_write);
}

}  // namespace ferry::transport::detail
