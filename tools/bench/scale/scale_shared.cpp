#include "scale/scale_shared.hpp"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <new>
#include <stdexcept>

namespace ferry::bench {

namespace {
void futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  // A shared (not FUTEX_PRIVATE) futex: the word is in a MAP_SHARED mapping
  // inherited by forked processes.
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, nullptr, nullptr,
                  0);
}
}  // namespace

ScaleShared::ScaleShared(std::uint32_t nodes)
    : bytes_(sizeof(ScaleHeader) + std::size_t{nodes} * sizeof(ScaleNodeSlot)), nodes_(nodes) {
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("cannot map the scale benchmark's control block (mmap failed)");
  }
  header_ = new (p) ScaleHeader{};
  slots_ = reinterpret_cast<ScaleNodeSlot*>(static_cast<std::byte*>(p) + sizeof(ScaleHeader));
  for (std::uint32_t k = 0; k < nodes; ++k) new (&slots_[k]) ScaleNodeSlot{};
}

ScaleShared::~ScaleShared() {
  for (std::uint32_t k = 0; k < nodes_; ++k) slots_[k].~ScaleNodeSlot();
  header_->~ScaleHeader();
  ::munmap(header_, bytes_);
}

void ScaleShared::set_phase(ScalePhase phase) noexcept {
  // SYNC: release, pairs with the acquire in wait_phase/phase(): what the
  // orchestrator wrote before (traffic_start_ns) is seen by the nodes.
  header_->phase.store(static_cast<std::uint32_t>(phase), std::memory_order_release);
  futex(header_->phase, FUTEX_WAKE, INT_MAX);
}

void ScaleShared::wait_phase(ScalePhase phase) const noexcept {
  for (;;) {
    // SYNC: acquire, pairs with the release in set_phase.
    const std::uint32_t now = header_->phase.load(std::memory_order_acquire);
    if (now >= static_cast<std::uint32_t>(phase)) return;
    futex(header_->phase, FUTEX_WAIT, now);  // returns at once if it changed meanwhile
  }
}

ScalePhase ScaleShared::phase() const noexcept {
  // SYNC: acquire, pairs with the release in set_phase.
  return static_cast<ScalePhase>(header_->phase.load(std::memory_order_acquire));
}

}  // namespace ferry::bench
