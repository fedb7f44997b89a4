#include "alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace ferry::test {
namespace {

thread_local bool counting_thread = false;
thread_local std::size_t thread_count = 0;
std::atomic<bool> counting_process{false};
std::atomic<std::size_t> process_count{0};

void note_allocation() noexcept {
  if (counting_thread) ++thread_count;
  // SYNC: relaxed loads and adds: a flag and a count, no data hangs on them.
  // An allocation racing an edge of the window is counted or not; the tests
  // expect 0 either way.
  if (counting_process.load(std::memory_order_relaxed))
    process_count.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void start_counting_thread() noexcept {
  thread_count = 0;
  counting_thread = true;
}

std::size_t stop_counting_thread() noexcept {
  counting_thread = false;
  return thread_count;
}

std::size_t thread_allocations() noexcept { return thread_count; }

void start_counting_process() noexcept {
  process_count.store(0, std::memory_order_relaxed);        // SYNC: relaxed, as above
  counting_process.store(true, std::memory_order_relaxed);  // SYNC: relaxed, as above
}

std::size_t stop_counting_process() noexcept {
  counting_process.store(false, std::memory_order_relaxed);  // SYNC: relaxed, as above
  return process_count.load(std::memory_order_relaxed);      // SYNC: relaxed, as above
}

}  // namespace ferry::test

using ferry::test::note_allocation;

void* operator new(std::size_t n) {
  note_allocation();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  note_allocation();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  note_allocation();
  const auto align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// glibc's allocator entry points, so that a malloc() behind our back counts too.
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);
extern "C" void* malloc(std::size_t n) {
  note_allocation();
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t n, std::size_t size) {
  note_allocation();
  return __libc_calloc(n, size);
}
extern "C" void* realloc(void* p, std::size_t n) {
  note_allocation();
  return __libc_realloc(p, n);
}
#endif
