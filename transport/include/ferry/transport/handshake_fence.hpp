#pragma once
// The doorbell handshake's two fences, asymmetric (docs/design/wait.md;
// why and when, in handshake_fence.cpp): a light notifier pays a compiler
// barrier, a waiter about to sleep a membarrier(2).

#include <atomic>
#include <chrono>

namespace ferry::transport {

namespace detail {
extern bool g_light_notifier;  // set at load (and in a forked child) only
}  // namespace detail

// The notifier's half: after the release store of an index, before the
// relaxed load of the doorbell's `sleeping`.
inline void notifier_fence() noexcept {
  if (detail::g_light_notifier) [[likely]] {
    // SYNC: compiler barrier; pairs with waiter_fence()'s membarrier, which
    // runs a full barrier on our CPU (or we were switched out: one too).
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    // SYNC: seq_cst fence, pairs with waiter_fence()'s seq_cst fence.
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// The waiter's half, after announcing its sleep. False: it could not reach
// every light notifier, so it sleeps at most kUnsureSleepBound at a time.
[[nodiscard]] bool waiter_fence() noexcept;
inline constexpr std::chrono::milliseconds kUnsureSleepBound{1};

[[nodiscard]] bool light_notifier() noexcept;
[[nodiscard]] bool waits_reach_light_notifiers() noexcept;

}  // namespace ferry::transport
