#include "harness/run_control.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>

#include "ferry/bench/clock.hpp"

namespace ferry::bench {

SharedControl::SharedControl() {
  void* p = ::mmap(nullptr, sizeof(RunControl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error("cannot map the benchmark's control block (mmap failed)");
  control_ = new (p) RunControl{};
}

SharedControl::~SharedControl() {
  control_->~RunControl();
  ::munmap(control_, sizeof(RunControl));
}

void SharedControl::reset() noexcept {
  control_->~RunControl();
  new (control_) RunControl{};
}

std::string SharedControl::error_of(const RunControl& control) {
  // SYNC: acquire, pairs with the release store of error_written in
  // report_error: the message is complete (the scale benchmark reads it
  // while its nodes run).
  if (control.error_written.load(std::memory_order_acquire) == 0) {
    // SYNC: acquire, pairs with the claim in report_error.
    if (control.error_claimed.load(std::memory_order_acquire) != 0) {
      return "a side reported an error whose message was not complete yet";
    }
    return {};
  }
  return std::string(control.error, strnlen(control.error, sizeof control.error));
}

void report_error(RunControl& control, std::string_view what) noexcept {
  std::uint32_t expected = 0;
  // SYNC: acq_rel; the first side to claim writes the message.
  if (!control.error_claimed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel))
    return;
  const std::size_t n = std::min(what.size(), sizeof control.error - 1);
  std::memcpy(control.error, what.data(), n);
  control.error[n] = '\0';
  // SYNC: release, pairs with the acquire in error_of.
  control.error_written.store(1, std::memory_order_release);
}

bool start_barrier(RunControl& control, std::uint32_t parties, std::int64_t timeout_ns) noexcept {
  // SYNC: acq_rel, pairs with the other sides' increments: what each set up
  // before the barrier is visible to all after it.
  control.ready.fetch_add(1, std::memory_order_acq_rel);
  const std::int64_t deadline = now_ns() + timeout_ns;
  for (std::uint64_t i = 0;; ++i) {
    // SYNC: acquire, pairs with the fetch_add above in the other sides.
    if (control.ready.load(std::memory_order_acquire) >= parties) return true;
    if ((i & 0xff) == 0 && now_ns() > deadline) return false;
    std::this_thread::yield();
  }
}

void mark_finished(RunControl& control) noexcept {
  // SYNC: release, pairs with the acquire in wait_finished.
  control.finished.fetch_add(1, std::memory_order_release);
}

bool wait_finished(RunControl& control, std::uint32_t parties, std::int64_t timeout_ns) noexcept {
  const std::int64_t deadline = now_ns() + timeout_ns;
  // SYNC: acquire, pairs with the release in mark_finished.
  while (control.finished.load(std::memory_order_acquire) < parties) {
    if (now_ns() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace ferry::bench
