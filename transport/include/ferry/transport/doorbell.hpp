#pragma once
// Cross-process wait/notify: futex(2) and the doorbell word built on it (the
// word and the notifier's half, which the hot path inlines, are in
// doorbell_word.hpp).
//
// A DoorbellWord lives in shared memory. Any number of notifiers (producers
// of several rings) may ring it; its owner's threads sleep on it (a
// subscriber that has one ring per publisher, a WaitSet that sleeps on the
// doorbells of all its subscribers at once with futex_wait_any), so one
// sleep covers all of that waiter's rings. `sleeping` counts the waiters, so
// a WaitSet's helper thread and a take() may both sleep on one doorbell.
//
// The handshake (a Dekker pattern, so release/acquire is not enough):
//   waiter:   ++sleeping; fence(seq_cst); seen = seq; if (ready()) return;
//             futex_wait(seq, seen, timeout); --sleeping
//   notifier: (publish its index with release); fence(seq_cst);
//             if (sleeping) { ++seq; futex_wake(seq) }
// The two seq_cst fences are ordered one way or the other: either the
// notifier's load sees sleeping == 1 and wakes, or the waiter's ready() sees
// the published index and does not sleep. The waiter reads seq BEFORE
// ready(), so a notification that lands between ready() and futex_wait makes
// the kernel's compare fail (EAGAIN) instead of being lost. A notifier that
// finds nobody sleeping makes no system call.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "ferry/transport/doorbell_word.hpp"  // DoorbellWord, doorbell_notify, futex_wake

namespace ferry::transport {

enum class FutexResult : std::uint8_t {
  Woken,         // woken by futex_wake (or spuriously): re-check the condition
  ValueChanged,  // the word no longer held `expected` (EAGAIN)
  TimedOut,      // the relative timeout elapsed
  Interrupted,   // a signal arrived (EINTR)
  Error,         // any other errno (EFAULT, EINVAL): a bug, treated like a wake-up
};

// FUTEX_WAIT on a word in shared memory, WITHOUT FUTEX_PRIVATE_FLAG so that a
// waker in another process finds us. Sleeps while `word == expected`, at most
// `timeout` (relative, CLOCK_MONOTONIC). A timeout <= 0 returns at once.
FutexResult futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       std::chrono::nanoseconds timeout) noexcept;

// Most words futex_wait_any sleeps on at once (the kernel's FUTEX_WAITV_MAX).
inline constexpr std::size_t kMaxWaitWords = 128;

// futex_waitv(2) over shared words: sleeps until any `words[i]` no longer
// holds `expected[i]` (ValueChanged) or is woken (Woken), at most `timeout`.
// One sleep for many doorbells: a notifier of any of them wakes it with the
// plain futex_wake (doorbell_word.hpp). At most kMaxWaitWords words (more: Error).
FutexResult futex_wait_any(const std::atomic<std::uint32_t>* const* words,
                           const std::uint32_t* expected, std::size_t count,
                           std::chrono::nanoseconds timeout) noexcept;

// The waiter's half of the handshake, for callers that sleep on several
// doorbells at once (WaitSet): announce on each, ONE waiter_fence(), then read
// each seq (acquire, pairs with the release fetch_add in doorbell_notify)
// before checking the condition.
inline void doorbell_announce_sleep(DoorbellWord& bell) noexcept {
  // SYNC: relaxed RMW; published by the waiter_fence() that follows, pairs
  // with the relaxed load of `sleeping` after notifier_fence() in doorbell_notify.
  bell.sleeping.fetch_add(1, std::memory_order_relaxed);
}
inline void doorbell_end_sleep(DoorbellWord& bell) noexcept {
  // SYNC: relaxed RMW; a notifier reading a stale count only makes one useless wake.
  bell.sleeping.fetch_sub(1, std::memory_order_relaxed);
}

enum class WaitResult : std::uint8_t {
  Ready,     // ready() was true after announcing the sleep: did not sleep
  Woken,     // slept and was woken (or the word moved, or a signal): re-check
  TimedOut,  // slept for the whole timeout
};

// Sleeps until notified or `timeout` elapsed, unless `ready()` (the caller's
// condition over its rings, e.g. "any ring has data") is already true after
// the handshake.
template <class Ready>
WaitResult doorbell_wait(DoorbellWord& bell, Ready&& ready,
                         std::chrono::nanoseconds timeout) noexcept {
  doorbell_announce_sleep(bell);
  // SYNC: pairs with notifier_fence() in doorbell_notify (handshake_fence.hpp).
  const bool sure = waiter_fence();
  // SYNC: acquire, pairs with the release fetch_add in doorbell_notify. Read
  // BEFORE ready(): a notification after this point changes seq, so the
  // kernel refuses to sleep on the stale value.
  const std::uint32_t seen = bell.seq.load(std::memory_order_acquire);
  WaitResult result = WaitResult::Ready;
  if (!ready()) {
    // A handshake that may have missed a light notifier sleeps in short
    // steps; the caller's loop looks again (Woken) until its own deadline.
    const bool bounded = !sure && timeout > kUnsureSleepBound;
    const auto slept = futex_wait(bell.seq, seen, bounded ? kUnsureSleepBound : timeout);
    result = slept == FutexResult::TimedOut && !bounded ? WaitResult::TimedOut : WaitResult::Woken;
  }
  doorbell_end_sleep(bell);
  return result;
}

// Clears a stale `sleeping` flag left by a waiter that died in doorbell_wait
// (otherwise every notify would make a useless system call). Only the
// doorbell's owner calls it, when nobody of its own waits on the doorbell
// (it forgets every waiter's count).
inline void doorbell_reset_sleeping(DoorbellWord& bell) noexcept {
  // SYNC: relaxed; the owner is the only writer and no waiter of its own is active.
  bell.sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace ferry::transport
