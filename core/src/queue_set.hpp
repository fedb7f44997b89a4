#pragma once
// A subscriber's queues as its user thread reads them (QueueSet), each
// through its queue end (SubscriberQueueEnd): the one place that knows the
// take order, which queue is skipped, and when one is retired and dropped.
// take(), take_many() and the waits (a spinning poll, a sleep on the
// doorbell, a WaitSet) all go through it; the queue's states and their
// moves are in queue_state.hpp.
//
// The take order is round-robin: each round starts after the last queue
// that gave a sample, so no publisher starves another, and each queue is
// read in its own order. A Waiting queue is skipped while an older queue of
// its publisher is in the set. A queue found empty is retired when its
// publisher is done with it (Closed, or Old and finished) and dropped at the
// end of the round, by the port (SubscriberState::drop_drained), which
// settles what the dropped queue held in the pool.
//
// Everything here is the user's thread's, called with no lock; the rounds
// and polls are on the hot path (no allocation, lock or system call).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "queue_state.hpp"

namespace ferry::detail {

// The subscriber's end of one queue. Made by the runtime thread (on_matched)
// and handed to the user's thread under the port's mutex; the fields are
// fixed from then on except `state` and the consumer, the user's thread's.
struct SubscriberQueueEnd {
  std::uint64_t peer = 0;              // the publisher port's id, as ferryd gave it this queue
  transport::NodeSlot peer_owner = 0;  // the publisher's node, giver of pool references
  transport::Segment queue_segment;
  transport::RingConsumer consumer;
  // The publisher port's identity (PeerOf::identity).
  std::uint64_t peer_identity = 0;
  // Queues of this port in the order they were matched (1, 2, ...): a
  // Waiting queue waits for those of its publisher with a smaller one.
  std::uint64_t match_order = 0;
  QueueState state = QueueState::Live;
};

// What a round's visit of one queue found (QueueSet::round).
enum class Visited : std::uint8_t {
  Empty,    // nothing there: a queue its publisher is done with is retired
  Skipped,  // a slot that was no plausible sample, dropped: on to the next queue
  Took,     // a sample or more: the next round starts after this queue
  Done,     // took what the caller wanted: the round ends
};

class QueueSet {
 public:
  using Queues = std::vector<std::unique_ptr<SubscriberQueueEnd>>;

  [[nodiscard]] std::size_t size() const noexcept { return queues_.size(); }
  [[nodiscard]] bool empty() const noexcept { return queues_.empty(); }
  [[nodiscard]] SubscriberQueueEnd& front() const noexcept { return *queues_.front(); }
  [[nodiscard]] Queues::const_iterator begin() const noexcept { return queues_.begin(); }
  [[nodiscard]] Queues::const_iterator end() const noexcept { return queues_.end(); }

  // ---- the hand-over (apply_changes; not the hot path) ----
  void add(std::unique_ptr<SubscriberQueueEnd> q) { queues_.push_back(std::move(q)); }
  // ferryd restarted and adopted our node: the queue from `peer` is Old.
  void age(std::uint64_t peer) noexcept {
    for (auto& q : queues_) {
      if (q->peer == peer) advance(q->state, aged(q->state));
    }
  }
  // The publisher `peer` left or died: its queue is Closed.
  void close(std::uint64_t peer) noexcept {
    for (auto& q : queues_) {
      if (q->peer == peer && !closed(q->state)) advance(q->state, closed_by_publisher(q->state));
    }
  }
  // Drops every queue, calling gone(queue) for each first (in its last state).
  template <class Gone>
  void clear(Gone&& gone) noexcept {
    for (auto& q : queues_) {
      gone(*q);  // sees the state the queue ends in
      advance(q->state, QueueState::Dropped);
    }
    queues_.clear();
  }
  // Drops the Closed queues that are empty, calling gone(queue) for each
  // first (in its last state: an Old queue's ring name is removed).
  template <class Gone>
  void drop_drained(Gone&& gone) noexcept {
    std::erase_if(queues_, [&](const auto& q) {
      if (!closed(q->state) || q->consumer.has_data()) return false;
      gone(*q);  // sees the state the queue ends in
      advance(q->state, QueueState::Dropped);
      return true;
    });
  }
  // The lane's queue: the only one, once it waits for none (alone, it has
  // no older queue), if it is Live; else null.
  [[nodiscard]] SubscriberQueueEnd* lone_live() noexcept {
    if (queues_.size() != 1) return nullptr;
    SubscriberQueueEnd& q = *queues_.front();
    if (waits(q.state)) advance(q.state, wait_over(q.state));
    return q.state == QueueState::Live ? &q : nullptr;
  }

  // ---- the hot path ----
  // One round over the queues from the round-robin start; visit(queue)
  // returns what it found. `done`: a visit said Done; `drained`: a queue
  // its publisher is done with was found empty (the caller drops it).
  struct RoundEnd {
    bool done = false;
    bool drained = false;
  };
  template <class Visit>
  RoundEnd round(Visit&& visit) noexcept {
    RoundEnd end;
    const std::size_t n = queues_.size();
    std::size_t index = next_ < n ? next_ : 0;  // no division on the hot path
    for (std::size_t i = 0; i < n; ++i, index = index + 1 < n ? index + 1 : 0) {
      SubscriberQueueEnd& q = *queues_[index];
      if (still_waits(q)) continue;
      const Visited found = visit(q);
      if (found == Visited::Skipped) continue;
      if (found == Visited::Empty) {
        if (retire_if_done(q)) end.drained = true;
        continue;
      }
      next_ = index + 1;
      if (found == Visited::Done) {
        end.done = true;
        break;
      }
    }
    return end;
  }

  // The poll of a spinning caller, usually empty: one load of each queue's
  // tail (none while a queue's cached tail already shows a sample). A
  // queue its publisher is or may be done with sends the caller the long
  // way (round), which retires it once drained.
  [[nodiscard]] bool any_ready() const noexcept {
    for (const auto& q : queues_) {
      if (closed(q->state) || from_previous_daemon(q->state) || q->consumer.ready()) return true;
    }
    return false;
  }
  // Whether a round would find something: a sample in a queue that waits
  // for none, or an Old queue its publisher finished (the round retires
  // it). What a sleeping take waits for.
  [[nodiscard]] bool any_data() noexcept {
    for (const auto& q : queues_) {
      if (q->consumer.has_data() && !still_waits(*q)) return true;
      if (from_previous_daemon(q->state) && q->consumer.finished()) return true;
    }
    return false;
  }

 private:
  // Whether q must still wait for an older queue of its publisher; its wait
  // ends here once there is none.
  bool still_waits(SubscriberQueueEnd& q) noexcept {
    if (!waits(q.state)) [[likely]]
      return false;
    for (const auto& other : queues_) {
      if (other->peer_identity == q.peer_identity && other->match_order < q.match_order) {
        return true;
      }
    }
    advance(q.state, wait_over(q.state));
    return false;
  }
  // q was found empty: true when its publisher is done with it (Closed, or
  // Old and finished: then it is Closed now).
  static bool retire_if_done(SubscriberQueueEnd& q) noexcept {
    if (closed(q.state)) return true;
    if (from_previous_daemon(q.state) && q.consumer.finished()) [[unlikely]] {
      // The publisher switched to its new queue.
      advance(q.state, closed_by_publisher(q.state));
      return true;
    }
    return false;
  }

  Queues queues_;
  std::size_t next_ = 0;  // the round-robin start
};

}  // namespace ferry::detail
