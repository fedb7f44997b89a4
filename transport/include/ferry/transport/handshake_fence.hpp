#pragma once
// The two fences of the doorbell handshake (docs/design/wait.md), made
// asymmetric: the notifier, on every publish, pays a compiler barrier; the
// waiter, about to sleep anyway, pays a membarrier(2) system call that puts
// a full barrier on every CPU running a registered process.
//
// A process is a light notifier only once membarrier's
// MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED succeeded for it (at load, and
// again in a forked child); until then, and where the kernel or a seccomp
// filter refuses it, and under ThreadSanitizer (which does not see
// membarrier), it fences with seq_cst as before. Either kind of notifier
// pairs with waiter_fence().

#include <atomic>
#include <chrono>

namespace ferry::transport {

namespace detail {
// Set once by the transport library's initialisation (and in a forked
// child, before it returns from fork), read by every notify: plain bool,
// written before any thread of ours publishes.
extern bool g_light_notifier;
}  // namespace detail

// The notifier's half: after the release store of an index, before the
// relaxed load of the doorbell's `sleeping`.
inline void notifier_fence() noexcept {
  if (detail::g_light_notifier) [[likely]] {
    // SYNC: compiler barrier only; the waiter's membarrier(2) puts a full
    // barrier on our CPU if we run, and a context switch is one if we do
    // not, so the index store and the `sleeping` load are ordered against
    // the waiter's as a seq_cst fence here would order them.
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    // SYNC: seq_cst fence, pairs with waiter_fence()'s seq_cst fence.
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// The waiter's half: after announcing the sleep (`sleeping` raised), before
// reading `seq` and the queues. Returns false when it could not reach every
// light notifier (membarrier refused in this process while the kernel offers
// it): the handshake may then miss a wake-up, and the caller sleeps at most
// kUnsureSleepBound at a time before it looks again.
[[nodiscard]] bool waiter_fence() noexcept;

// Longest sleep when waiter_fence() returned false: a missed wake-up costs
// at most this much delay, never a sample.
inline constexpr std::chrono::milliseconds kUnsureSleepBound{1};

// For `ferry doctor`-style reports and tests: whether this process
// notifies with the light fence, and whether its waits reach light notifiers.
[[nodiscard]] bool light_notifier() noexcept;
[[nodiscard]] bool waits_reach_light_notifiers() noexcept;

}  // namespace ferry::transport
