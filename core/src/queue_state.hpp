#pragma once
// The life of a subscriber's queue (its queue end, SubscriberQueueEnd in
// queue_set.hpp), as the subscriber's user thread sees it: one state, moved
// only by advance(), which checks the move against the table below.
//
// Three things can be true of a queue, and the states are their reachable
// combinations (the enumerators are bit sets of them):
//   Waiting  it replaces a previous daemon's queue of the same publisher
//            (previous_daemon_queues.hpp) and is read only once every older queue of
//            that publisher is gone, so the publisher's order holds;
//   Old      a previous ferryd set it up: it is read until its publisher
//            closes it (the ring says finished), and when it is dropped its
//            ring's name is removed (the daemon now running does not know it);
//   Closed   its publisher left (Unmatched) or was found dead, or, Old, it
//            finished: what it queued is still delivered, then it is dropped.
//
//   from              to                event (where)                      why
//   Live              Old               ferryd restarted and adopted our   it is read until its
//   Waiting           OldWaiting          node (apply_aging)               publisher switches
//   Live              Closed            the publisher left or died         what it queued is
//   Waiting           ClosedWaiting       (apply_changes: on_unmatched,    delivered; a waiting
//   Old               OldClosed           check_old_peers)                 one still waits
//   OldWaiting        OldClosedWaiting
//   Old               OldClosed         empty and finished: its publisher  it writes its new
//                                         closed it (QueueSet::round)      queue now
//   Waiting           Live              no older queue of the publisher    the older samples
//   OldWaiting        Old                 is left (QueueSet: still_waits,  were all taken
//   ClosedWaiting     Closed              lone_live)
//   OldClosedWaiting  OldClosed
//   any               Dropped           Closed and empty (drop_drained),   nothing more comes,
//                                         or the session ended, or a       or nobody reads it
//                                         forked child's copy (clear)
// Dropped is final: the queue end is destroyed right after. A second word
// that the same publisher left changes nothing (closing a Closed queue keeps
// its state). Everything else is a bug in ferry (FERRY_CHECK).
//
// Threads: the runtime thread only chooses a new queue's first state (Live,
// or Waiting when it replaces an old queue) before it hands the queue over
// under the port's mutex; from then on the state is the user's thread's
// alone, a plain field.

#include <cstdint>

#include "checked.hpp"

namespace ferry::detail {

namespace queue_bits {
inline constexpr std::uint8_t kWaiting = 1;
inline constexpr std::uint8_t kOld = 2;
inline constexpr std::uint8_t kClosed = 4;
inline constexpr std::uint8_t kDropped = 8;
}  // namespace queue_bits

enum class QueueState : std::uint8_t {
  Live = 0,  // read in turn, fairly with the port's other queues
  Waiting = queue_bits::kWaiting,
  Old = queue_bits::kOld,
  OldWaiting = queue_bits::kOld | queue_bits::kWaiting,
  Closed = queue_bits::kClosed,
  ClosedWaiting = queue_bits::kClosed | queue_bits::kWaiting,
  OldClosed = queue_bits::kClosed | queue_bits::kOld,
  OldClosedWaiting = queue_bits::kClosed | queue_bits::kOld | queue_bits::kWaiting,
  Dropped = queue_bits::kDropped,
};

[[nodiscard]] constexpr std::uint8_t bits_of(QueueState s) noexcept {
  return static_cast<std::uint8_t>(s);
}
// Read only once the older queues of its publisher are gone.
[[nodiscard]] constexpr bool waits(QueueState s) noexcept {
  return (bits_of(s) & queue_bits::kWaiting) != 0;
}
// Set up by a previous ferryd.
[[nodiscard]] constexpr bool from_previous_daemon(QueueState s) noexcept {
  return (bits_of(s) & queue_bits::kOld) != 0;
}
// Its publisher is done with it: dropped once empty.
[[nodiscard]] constexpr bool closed(QueueState s) noexcept {
  return (bits_of(s) & queue_bits::kClosed) != 0;
}

// The target of each event of the table; for an event the state cannot
// have, the state itself: the table has no move from a state to itself, so
// advance() refuses it.
[[nodiscard]] constexpr QueueState aged(QueueState s) noexcept {
  if (s == QueueState::Live) return QueueState::Old;
  if (s == QueueState::Waiting) return QueueState::OldWaiting;
  return s;
}
[[nodiscard]] constexpr QueueState closed_by_publisher(QueueState s) noexcept {
  if (s == QueueState::Dropped) return s;
  return static_cast<QueueState>(bits_of(s) | queue_bits::kClosed);
}
[[nodiscard]] constexpr QueueState wait_over(QueueState s) noexcept {
  if (!waits(s)) return s;
  return static_cast<QueueState>(bits_of(s) & ~queue_bits::kWaiting);
}

// Whether the table above has the move from -> to.
[[nodiscard]] constexpr bool queue_move_legal(QueueState from, QueueState to) noexcept {
  using enum QueueState;
  if (from == Dropped || from == to) return false;  // final; no move to itself
  if (to == Dropped) return true;                   // drained, or the session ended
  if (to == aged(from) && (from == Live || from == Waiting)) return true;
  if (!closed(from) && to == closed_by_publisher(from)) return true;
  return waits(from) && to == wait_over(from);
}

// The one way a queue's state changes.
inline void advance(QueueState& state, QueueState to) noexcept {
  FERRY_CHECK(queue_move_legal(state, to), "a queue's state moved against its table");
  state = to;
}

}  // namespace ferry::detail
