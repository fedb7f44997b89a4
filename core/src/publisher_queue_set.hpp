#pragma once
// A publisher port's queues (PublisherQueueSet), each through its queue end
// (PublisherQueueEnd): the one owner of the lists that hold them and of
// their moves (publisher_queue_state.hpp). The runtime thread hands a queue
// over and announces its leaving; the user's thread applies both, in one
// step under the port's mutex, and writes the active queues on the hot
// path. The subscriber's queues are read through QueueSet (queue_set.hpp).
//
// Lists and threads (which list holds a queue follows from its state):
//   list        holds                                    thread
//   incoming_   Incoming and Replacing queues            runtime appends, user drains; mutex_
//   leaving_    the leavings announced, not applied      runtime appends, user drains; mutex_
//   handed_     the queues the runtime thread may still  runtime only (a map by peer port,
//                 abandon (any state)                      not owning)
//   active_     Active queues: subscribers' first,       user only
//                 observers' after them
//   graveyard_  Buried queues, freed with the port       user (under mutex_, but for a forked
//                                                          child's copy)
// A method that takes a Lock is called with the port's mutex_ held.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "history_handoff.hpp"
#include "lock_order.hpp"
#include "publisher_queue_state.hpp"

namespace ferry::detail {

// The publisher's end of one queue. Made by the runtime thread (on_matched)
// and handed to the user's thread under the port's mutex.
struct PublisherQueueEnd {
  std::uint64_t peer = 0;
  transport::NodeSlot peer_owner = 0;  // the subscriber's node, receiver of pool references
  transport::Segment queue_segment;
  transport::Segment bell_segment;  // the subscriber's doorbell
  transport::RingProducer producer;
  // The first history entry not handed to this queue yet (its producer's
  // thread: the runtime thread until the queue is applied, then the user's).
  std::uint64_t history_next = 0;
  // The subscriber is an observer: its queue overwrites (whatever the
  // topic's policy), and its outcome is not the publisher's result.
  bool observer = false;
  // Raised by the runtime thread when the subscriber is gone, to end a
  // block-policy push() waiting for room in its queue.
  std::atomic<bool> abandoned{false};
  // Chosen by the runtime thread before the hand-over, then the user's
  // thread's alone (publisher_queue_state.hpp). After `abandoned`: the
  // fields the hot path reads keep their offsets.
  PublisherQueueState state = PublisherQueueState::Incoming;
  // publish_many (user's thread): samples of the current batch this queue took.
  std::size_t batch_done = 0;
  // Who hands this queue the topic's history first (history_handoff.hpp).
  HistoryClaim history{};
};

// A queue's leaving, as the runtime thread announces it (keyed by the peer
// port the queue was matched with).
struct QueueLeaving {
  std::uint64_t peer = 0;
  Departure why = Departure::PortDestroyed;
  // The subscriber's node is dead (0: it is not): once this queue is
  // dropped, what we gave it since ferryd reclaimed it is revoked.
  transport::NodeSlot dead_owner = 0;
};

class PublisherQueueSet {
 public:
  using Queues = std::vector<std::unique_ptr<PublisherQueueEnd>>;
  // The caller's lock on the port's mutex_, held while the method runs.
  using Lock = std::lock_guard<RankedMutex<LockRank::PortQueues>>;

  // ---- the user's thread: the hot path ----
  [[nodiscard]] Queues& active() noexcept { return active_; }
  // How many of active(), from the front, are real subscribers' queues.
  [[nodiscard]] std::size_t subscriber_queues() const noexcept { return subscriber_queues_; }

  // ---- the runtime thread ----
  // A new queue, in its first state, and the leavings of the previous
  // ferryd's queues it replaces: handed over together, so that apply()
  // takes both or neither (previous_daemon_queues.hpp, point 1).
  void hand_over(const Lock& /*held*/, std::unique_ptr<PublisherQueueEnd> q,
                 std::span<const QueueLeaving> replaced) {
    FERRY_CHECK(incoming(q->state), "a publisher queue handed over in a later state");
    handed_[q->peer] = q.get();
    incoming_.push_back(std::move(q));
    leaving_.insert(leaving_.end(), replaced.begin(), replaced.end());
  }
  // A queue's leaving, once the runtime thread is done with it (released):
  // from then on the user's thread may free the queue.
  void announce_leaving(const Lock& /*held*/, const QueueLeaving& leaving) {
    leaving_.push_back(leaving);
  }
  // The queue handed over for `peer` and not released yet; null if none.
  [[nodiscard]] PublisherQueueEnd* handed(std::uint64_t peer) const noexcept {
    const auto h = handed_.find(peer);
    return h != handed_.end() ? h->second : nullptr;
  }
  // The runtime thread is done with peer's queue (it announces its leaving
  // next): the queue, alive until that leaving is applied, or null.
  PublisherQueueEnd* release(std::uint64_t peer) noexcept {
    const auto h = handed_.find(peer);
    if (h == handed_.end()) return nullptr;
    PublisherQueueEnd* const q = h->second;
    handed_.erase(h);
    return q;
  }
  // The same for a queue whose reader is gone: a push blocked on it gives
  // up first (before the leaving lets the user's thread free it).
  PublisherQueueEnd* abandon(std::uint64_t peer) noexcept {
    PublisherQueueEnd* const q = handed(peer);
    if (q != nullptr) raise_abandoned(*q);
    return release(peer);
  }
  // Our node was declared dead: every push blocked on a queue gives up.
  void abandon_all() noexcept {
    for (auto& [peer, q] : handed_) raise_abandoned(*q);
    handed_.clear();
  }

  // ---- the user's thread, applying changes ----
  // Applies what the runtime thread handed over: each new queue is written
  // first by first_write(queue) (in its first state: the history), then
  // Active; each leaving is applied to its queue (take_back(queue) empties
  // it, as its Departure says), which is Retired and freed, and then
  // revoke(node) is called for a dead subscriber's node.
  template <class FirstWrite, class TakeBack, class Revoke>
  void apply(const Lock& /*held*/, FirstWrite&& first_write, TakeBack&& take_back,
             Revoke&& revoke) {
    for (auto& q : incoming_) {
      first_write(*q);  // sees its first state
      advance(q->state, PublisherQueueState::Active);
      active_.push_back(std::move(q));
    }
    incoming_.clear();
    for (const QueueLeaving& l : leaving_) {
      std::erase_if(active_, [&](const auto& q) {
        if (q->peer != l.peer) return false;
        if (takes_back_queued(l.why)) take_back(*q);
        if (closes_ring(l.why)) q->producer.close();  // nothing more comes: its reader moves on
        advance(q->state, PublisherQueueState::Retired);
        return true;
      });
      // The exact re-reclaim of a dead subscriber node S. ferryd reclaimed S
      // when it died, but this thread may have been between a give to S and
      // its push then (stopped, descheduled), or published again before the
      // runtime thread had the Unmatched: those references are S's pending
      // ones, in a ring nobody reads. Every give to S by this port happens on
      // this thread, in a publish that found S's queue in active_; the queue
      // is gone from active_ now, so no give follows: the scan (revoke), on
      // this thread, comes after the last one (program order) and drops them
      // all (each a CAS on S's slot naming us as giver; references that
      // ferryd's reclaim dropped already are not found twice). Another port
      // of ours still feeding S does the same when it applies S's leaving;
      // the last scan comes after every give. If we die first, ferryd's
      // reclaim of us drops what we gave to dead nodes (reclaim_owner's
      // dead_receiver).
      if (l.dead_owner != 0) revoke(l.dead_owner);
    }
    leaving_.clear();
    // Real subscribers' queues first, observers' after them (deliver()).
    const auto first_observer = std::stable_partition(active_.begin(), active_.end(),
                                                      [](const auto& q) { return !q->observer; });
    subscriber_queues_ = static_cast<std::size_t>(first_observer - active_.begin());
  }
  // ferryd reclaimed our node: its queues are not ours to write any more.
  // They are Buried (kept, not freed) until the port goes: the runtime
  // thread may still release a push on one of them (handed_). We write no
  // queue any more: as in apply(), revoke(node) for each dead subscriber
  // whose leaving was not applied.
  template <class Revoke>
  void bury(const Lock& /*held*/, Revoke&& revoke) {
    bury_list(active_);
    bury_list(incoming_);
    for (const QueueLeaving& l : leaving_) {
      if (l.dead_owner != 0) revoke(l.dead_owner);
    }
    leaving_.clear();
    subscriber_queues_ = 0;
  }
  // A forked child's copy of its parent's port (fork_guard.hpp): the queues
  // are the parent's to write. No lock (a thread of the parent may have held
  // it at the fork; the child has no runtime thread to share these lists
  // with), nothing else touched: the active ones are set aside until the
  // port goes.
  void bury_inherited() {
    bury_list(active_);
    subscriber_queues_ = 0;
  }
  // The port goes (not a forked child's copy): revoke(node) for each dead
  // subscriber whose leaving was not applied (this port gives nothing
  // more), and every queue not Buried is closed: a reader that no ferryd
  // will tell (one is down, or restarted since the queue was made) retires
  // the queue once drained (RingConsumer::finished()).
  template <class Revoke>
  void close_all(const Lock& /*held*/, Revoke&& revoke) noexcept {
    for (const QueueLeaving& l : leaving_) {
      if (l.dead_owner != 0) revoke(l.dead_owner);
    }
    for (auto& q : active_) q->producer.close();
    for (auto& q : incoming_) q->producer.close();
  }

 private:
  void bury_list(Queues& from) {
    for (auto& q : from) {
      advance(q->state, PublisherQueueState::Buried);
      graveyard_.push_back(std::move(q));
    }
    from.clear();
  }
  // Releases a push() blocked on q's queue (runtime thread).
  static void raise_abandoned(PublisherQueueEnd& q) noexcept {
    // SYNC: release, pairs with the acquire load in the ring's push_slow;
    // notify_space()'s fence orders it before the check of `sleeping`.
    q.abandoned.store(true, std::memory_order_release);
    q.producer.notify_space();
  }

  Queues incoming_;                                     // under mutex_
  std::vector<QueueLeaving> leaving_;                   // under mutex_
  std::map<std::uint64_t, PublisherQueueEnd*> handed_;  // runtime thread
  Queues active_;                                       // user's thread
  std::size_t subscriber_queues_ = 0;                   // user's thread: active_'s real subscribers
  Queues graveyard_;                                    // under mutex_: kept until the port goes
};

}  // namespace ferry::detail
