#pragma once
// Private to the pool: fetching a payload line ahead of its use.

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

}  // namespace ferry::transport::detail
