#pragma once
// What a WaitSet shares with the ports attached to it: a port destroyed on
// any thread unlinks itself here and wakes the waiter; the fd() helper
// thread sleeps on the same doorbells.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "ferry/detail/ports.hpp"
#include "ferry/transport/doorbell.hpp"
#include "lock_order.hpp"

namespace ferry::detail {

inline constexpr std::size_t kWaitSetSlots = 64;
// A sleep's futex words: every attachment's doorbell and the WaitSet's own.
inline constexpr std::size_t kWaitWords = kWaitSetSlots + 1;
static_assert(kWaitWords <= transport::kMaxWaitWords);

// One armed sleep: the words and the values they held after the handshake.
struct SleepWords {
  std::array<const std::atomic<std::uint32_t>*, kWaitWords> words{};
  std::array<std::uint32_t, kWaitWords> seen{};
  std::size_t count = 0;
  // The longest one sleep may last: kUnsureSleepBound when the handshake's
  // waiter_fence() could not reach every light notifier (handshake_fence.hpp).
  std::chrono::nanoseconds bound = std::chrono::nanoseconds::max();
};

class WaitSetCore {
 public:
  WaitSetCore();

  // Whether this process is a child forked after the WaitSet was made: then
  // everything here is a copy of the parent's, which still uses the
  // originals. The doorbells are shared memory (their `sleeping` counts are
  // the parent's sleeps), the eventfd is the parent's open file, the helper
  // thread does not exist here, and the mutex may have been held at the
  // fork by a thread that does not exist either. So the child's copy
  // touches none of them: it only lets go of its own descriptor.
  [[nodiscard]] bool inherited() const noexcept;

  struct Slot {
    SubscriberPort* port = nullptr;  // null: free
    transport::DoorbellWord* bell = nullptr;
  };

  // Guards everything below that is not atomic: wait(), detach and the
  // helper thread against a port destroyed on another thread. Rank 4 of
  // lock_order.hpp: collect() applies each port's changes under it.
  RankedMutex<LockRank::WaitSet> mutex;
  std::array<Slot, kWaitSetSlots> slots{};
  std::uint64_t used = 0;          // attached slots
  std::uint64_t gone = 0;          // ports destroyed while attached, not reported yet
  std::uint64_t waiter_armed = 0;  // slots whose `sleeping` counts wait()'s sleep
  std::uint64_t helper_armed = 0;  // ... and the helper's
  bool helper_sleeping = false;    // the helper has an armed sleep to do
  bool closed = false;             // the WaitSet is gone: ports only unlink
  SleepWords helper_words;         // the helper's armed sleep

  // The WaitSet's own futex word: bumped by notify(), a port gone, closing.
  std::atomic<std::uint32_t> wake{0};
  // Set by notify(), cleared by the wait() that reports it.
  std::atomic<std::uint32_t> notified{0};
  // fd(): the eventfd (-1 until asked for; read by notify() in a signal handler).
  std::atomic<int> event_fd{-1};
  // The helper's futex word: bumped to hand it an armed sleep or to stop it.
  std::atomic<std::uint32_t> helper_gen{0};
  std::thread helper;
  // fork_generation() when the WaitSet was made (inherited()).
  const std::uint64_t generation;

  // Under `mutex`: raises `sleeping` on every attachment's doorbell (bits
  // into `armed`), one seq_cst fence, then reads each word's value.
  void arm(std::uint64_t& armed, SleepWords& out) noexcept;
  // Under `mutex`: takes back the counts of `armed`.
  void disarm(std::uint64_t& armed) noexcept;
  // Under `mutex`: the ready attachments (and those gone, reported once).
  std::uint64_t collect() noexcept;
  // Wakes wait() and the helper (bumps `wake`).
  void wake_all() noexcept;
  void signal_fd() noexcept;
};

// ~SubscriberPort: unlinks the port from its WaitSet (if that still lives)
// and wakes it; wait() reports the index once.
void wait_set_port_gone(SubscriberPort& port) noexcept;

}  // namespace ferry::detail
