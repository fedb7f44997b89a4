#pragma once
// Handing a cache line to another core sooner: CLDEMOTE moves a line from
// this core's private caches to the shared one, where the other core's next
// access finds it instead of snooping ours. Used where a line written here
// is read next on another core: a pooled sample's metadata, payload head and
// slot (docs/design/hot-path.md, Demoting what the reader reads next).

namespace ferry::transport {

// A hint on a line this thread just wrote, once the stores to it are done
// (a locked instruction or a fence drained them); it orders nothing.
inline void cache_demote(const void* p) noexcept {
#if defined(__x86_64__)
  // CLDEMOTE (0F 1C /0): a NOP on x86-64 CPUs without it.
  asm volatile("cldemote %0" ::"m"(*static_cast<const char*>(p)));
#else
  (void)p;
#endif
}

}  // namespace ferry::transport
