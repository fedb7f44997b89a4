#pragma once
// The doorbell word and its notifier's half: what a ring's producer and
// consumer do on the hot path after publishing an index (the inline
// publish()/take() of ferry/detail/lane.hpp compile it into the caller).
// The waiter's half (futex_wait, doorbell_wait, futex_wait_any) and the
// handshake's argument are in ferry/transport/doorbell.hpp.

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "ferry/transport/handshake_fence.hpp"
#include "ferry/transport/platform.hpp"

namespace ferry::transport {

// FUTEX_WAKE (shared): wakes up to `count` waiters; returns how many woke.
int futex_wake(std::atomic<std::uint32_t>& word, int count = INT_MAX) noexcept;

// One cache line in shared memory. Zero-initialised is the valid initial state.
struct alignas(kCacheLine) DoorbellWord {
  // Bumped by a notifier that saw `sleeping`; the futex word.
  std::atomic<std::uint32_t> seq{0};
  // How many waiters are about to sleep or sleep on `seq` (each adds 1 and
  // takes it back); notifiers only read it.
  std::atomic<std::uint32_t> sleeping{0};
  std::byte reserved[kCacheLine - 2 * sizeof(std::uint32_t)]{};
};
static_assert(sizeof(DoorbellWord) == kCacheLine);
static_assert(alignof(DoorbellWord) == kCacheLine);
static_assert(offsetof(DoorbellWord, seq) == 0);
static_assert(offsetof(DoorbellWord, sleeping) == 4);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "futex(2) needs the atomic to be exactly the 32-bit word");

// Call after publishing (the release store of an index). No system call
// unless the waiter announced that it sleeps.
inline void doorbell_notify(DoorbellWord& bell) noexcept {
  // SYNC: pairs with waiter_fence() in doorbell_wait and WaitSet (Dekker:
  // orders our earlier index store before the load of `sleeping`; a
  // compiler barrier here, a membarrier(2) there: handshake_fence.hpp).
  notifier_fence();
  // SYNC: relaxed; ordered by the fences above against the waiter's
  // `sleeping` store, which precedes its fence.
  if (bell.sleeping.load(std::memory_order_relaxed) != 0) {
    // SYNC: release, pairs with the acquire load of `seq` in doorbell_wait:
    // a waiter that reads the new seq also sees the index we published.
    bell.seq.fetch_add(1, std::memory_order_release);
    futex_wake(bell.seq);
  }
}

}  // namespace ferry::transport
