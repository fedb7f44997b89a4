#pragma once
// Who hands a newly matched publisher queue the topic's history first: the
// runtime thread (at once, in on_matched, so a late joiner gets it even if
// the user never publishes again) or the user's thread (when it applies the
// new queue first). Exactly one of them claims it; the other adds only what
// was published since, after the winner is done.
//
//   from       to        function              thread
//   Unclaimed  Serving   claim_for_serving()   runtime (on_matched); it then hands the history
//   Serving    Handed    finish_serving()      runtime, after its pushes
//   Unclaimed  Handed    claim_for_user()      user's (apply_changes); from Serving it waits
//                                              (spins) until the runtime thread is Handed
// Handed is final: from then on only the user's thread writes the queue.

#include <atomic>
#include <cstdint>

#include "checked.hpp"
#include "ferry/transport/platform.hpp"
#include "ferry/transport/spin.hpp"

namespace ferry::detail {

enum class HistoryHandoff : std::uint8_t { Unclaimed, Serving, Handed };

class HistoryClaim {
 public:
  // Runtime thread: true when it won the claim (hand the history, then call
  // finish_serving()); false when the user's thread had it already.
  [[nodiscard]] bool claim_for_serving() noexcept {
    HistoryHandoff from = HistoryHandoff::Unclaimed;
    // SYNC: acq_rel CAS, pairs with the CAS in claim_for_user(): exactly one
    // of the two threads hands the history first.
    const bool won =
        state_.compare_exchange_strong(from, HistoryHandoff::Serving, std::memory_order_acq_rel);
    FERRY_CHECK(won || from == HistoryHandoff::Handed,
                "history hand-off: the runtime thread claims a queue it claimed before");
    return won;
  }

  // Runtime thread, after its pushes: the user's thread may write the queue.
  void finish_serving() noexcept {
    // SYNC: relaxed; only this thread leaves Serving, so this reads its own store.
    FERRY_CHECK(state_.load(std::memory_order_relaxed) == HistoryHandoff::Serving,
                "history hand-off: finish_serving() without claim_for_serving()");
    // SYNC: release, pairs with the acquire spin in claim_for_user(): our
    // pushes and history_next are complete before the user's thread goes on.
    state_.store(HistoryHandoff::Handed, std::memory_order_release);
  }

  // User's thread, applying the queue: returns once it is the queue's only
  // writer (at once, or after the runtime thread's few pushes).
  void claim_for_user() noexcept {
    HistoryHandoff from = HistoryHandoff::Unclaimed;
    // SYNC: acq_rel CAS, pairs with the runtime thread's in claim_for_serving().
    if (state_.compare_exchange_strong(from, HistoryHandoff::Handed, std::memory_order_acq_rel)) {
      return;
    }
    // SYNC: acquire, pairs with the release store in finish_serving().
    while (state_.load(std::memory_order_acquire) != HistoryHandoff::Handed) {
      transport::cpu_relax();
    }
  }

 private:
  std::atomic<HistoryHandoff> state_{HistoryHandoff::Unclaimed};
  static_assert(std::atomic<HistoryHandoff>::is_always_lock_free);
};

}  // namespace ferry::detail
