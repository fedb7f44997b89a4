#pragma once
// The lock order of the runtime: every mutex in core/src, outermost first.
// A thread holding one may take only those of a higher rank; two of one rank
// are never held together (two ports', or two WaitSets', have no order).
//
//  rank  mutex                          guards                               taken under it
//  1     NodeRuntime::rejoin_mutex_     one rejoin at a time (user threads)  2, 3
//  2     NodeRuntime::send_mutex_       the socket's write side, request ids 3, and what 3 takes
//  3     NodeRuntime::mutex_            ports_, replies_, connected_, ...    5, 6: a port's last
//                                       shared_ptr may die under it (replies_.clear(), a
//                                       weak_ptr locked there), and ~PortState takes 5 and 6
//  4     WaitSetCore::mutex             a WaitSet's attachments              5, 6: collect() asks
//                                       each port wait_ready(), which applies its changes
//  5     PortState::mutex_              a port's hand-over lists             6: apply_changes()
//                                       and ~PortState close subscriber queues (queue_closed)
//  6     DomainPoolView::peers_mutex_   queues per peer node                 none
//
// Leaves, not ranked: ClosedHeldSamples::mutex (held_samples.cpp; taken
// under 3 when a SubscriberState ends there), g_signals_mutex (executor.cpp;
// taken alone), log_gate() (shared, by every log line of ours, and around
// it spdlog's own: logging under any of these; exclusive only in fork()'s
// prepare handler, by a user's thread that holds none of ours). Each takes no
// other mutex while held, so it closes no cycle whatever is held when it is
// taken: plain std::mutex.
// Lock-free by design, so outside the order: everything on the hot path
// (port_state.hpp's ownership table says how each field is published).
//
// RankedMutex checks the order where it is cheap: in FERRY_CHECKED builds
// (debug and the sanitizer builds the tests run) each thread keeps a mask
// of the ranks it holds, and taking a mutex whose rank is not above all of
// them aborts naming both, before it blocks, so a wrong nesting shows even
// when this run did not deadlock. Release builds take the plain mutex.

#include <cstdint>
#include <mutex>

#include "checked.hpp"

namespace ferry::detail {

enum class LockRank : std::uint8_t {
  NodeRejoin = 1,
  NodeSend = 2,
  NodeRuntime = 3,
  WaitSet = 4,
  PortQueues = 5,
  PoolPeers = 6,
};

#if FERRY_CHECKED
// The calling thread takes a mutex of `rank`: aborts if it holds one of the
// same or a higher rank, else records it.
void lock_order_acquire(LockRank rank) noexcept;
// The calling thread let go of its mutex of `rank`.
void lock_order_release(LockRank rank) noexcept;
#endif

// A std::mutex with its place in the order above (BasicLockable: use it
// with std::lock_guard, std::unique_lock, std::condition_variable_any).
template <LockRank Rank>
class RankedMutex {
 public:
  void lock() {
#if FERRY_CHECKED
    lock_order_acquire(Rank);
#endif
    mutex_.lock();
  }
  void unlock() {
    mutex_.unlock();
#if FERRY_CHECKED
    lock_order_release(Rank);
#endif
  }

 private:
  std::mutex mutex_;
};

}  // namespace ferry::detail
