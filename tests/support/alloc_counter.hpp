#pragma once
// Counts heap allocations for the tests that prove ferry allocates nothing
// (the hot path, a steady topology): every operator new and, outside the
// sanitizers (which own malloc), every malloc, calloc and realloc, made
// while counting. Link the object library ferry_alloc_counter: it replaces
// the allocation functions of the whole test program.

#include <cstddef>

namespace ferry::test {

// This thread's allocations between the calls.
void start_counting_thread() noexcept;
[[nodiscard]] std::size_t stop_counting_thread() noexcept;

// Every thread's allocations between the calls (a node's runtime thread
// counts as much as the user's).
void start_counting_process() noexcept;
[[nodiscard]] std::size_t stop_counting_process() noexcept;

// Counts this thread's allocations while it lives.
class CountThreadAllocations {
 public:
  CountThreadAllocations() noexcept { start_counting_thread(); }
  ~CountThreadAllocations() { (void)stop_counting_thread(); }
  CountThreadAllocations(const CountThreadAllocations&) = delete;
  CountThreadAllocations& operator=(const CountThreadAllocations&) = delete;
};

// This thread's count so far (while a CountThreadAllocations lives).
[[nodiscard]] std::size_t thread_allocations() noexcept;

}  // namespace ferry::test
