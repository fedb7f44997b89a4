#pragma once
// The life of a publisher's queue (its queue end, PublisherQueueEnd in
// publisher_queue_set.hpp), as the publisher's user thread sees it: one
// state, moved only by advance(), which checks the move against the table
// below. The subscriber's side of a queue is in queue_state.hpp.
//
//   from       to         event (where)                           why
//   -          Incoming   matched (on_matched, hand_over)         its first state: it gets the
//                                                                   topic's history when applied
//   -          Replacing  matched, and it replaces a previous     its first state: it gets no
//                           ferryd's queue to the same subscriber   history (the old queue had it,
//                           port (on_matched, replaced_queues)      and every sample since)
//   Incoming   Active     applied (PublisherQueueSet::apply)      every publish writes it now
//   Replacing  Active
//   Active     Retired    its leaving applied (apply): emptied    nothing more goes to it
//                           or closed as its Departure says, then
//                           freed
//   Incoming   Buried     the session ended: ferryd reclaimed     not ours to write; kept (not
//   Replacing  Buried       our node (bury), or a forked child's  freed) until the port goes:
//   Active     Buried       copy of its parent's port             the runtime thread may still
//                           (bury_inherited: Active only)         release a push on it
// Retired and Buried are final: a Retired queue end is destroyed right
// after; a Buried one with the port. A queue still Incoming, Replacing or
// Active when the port goes is closed (its reader retires it once drained)
// and destroyed with the port. Everything else is a bug in ferry
// (FERRY_CHECK).
//
// Why a queue leaves, and what applying its leaving does (Departure; the
// runtime thread says which when it announces the leaving):
//   departure      announced by                      the ring               then
//   PortDestroyed  on_unmatched (the port was        its queued references  -
//                    destroyed), reader_left_leaving   taken back (emptied)
//                    (a previous ferryd's queue whose
//                    reader left the ring)
//   PeerDied       on_unmatched (the node closed     left as it is          revoke what was given
//                    or timed out)                                            to the dead node
//   Replaced       old_queue_leaving (its            closed: the reader     -
//                    replacement came)                 moves on once drained
//   OldPeerDied    old_queue_leaving (a previous     closed                 revoke what was given
//                    ferryd's queue, its node dead)                           to the dead node
//
// The runtime thread's side of a queue is not a state of the queue (the
// runtime thread never writes `state`): from hand_over until it announces
// the queue's leaving or our node's death it keeps the queue in `handed_`
// (PublisherQueueSet), where it may raise the queue's `abandoned` flag to
// release a push() blocked on a reader that is gone (on_unmatched, a dead
// old peer, a reader that left, mark_dead; not a replaced queue: its reader
// drains it). The leaving is announced only once the runtime thread is done
// with the queue, so the user's thread may free it then.
//
// Threads: the runtime thread only chooses a new queue's first state
// (Incoming, or Replacing) before it hands the queue over under the port's
// mutex; from then on the state is the user's thread's alone, a plain field.

#include <cstdint>

#include "checked.hpp"

namespace ferry::detail {

enum class PublisherQueueState : std::uint8_t {
  Incoming,   // handed over, not applied yet: the history comes first
  Replacing,  // the same, replacing a previous ferryd's queue: no history
  Active,     // written by every publish
  Retired,    // its leaving was applied: final, freed right after
  Buried,     // the session ended (or a forked child's copy): final, kept unwritten
};

// Why a queue leaves (the table above).
enum class Departure : std::uint8_t { PortDestroyed, PeerDied, Replaced, OldPeerDied };

// Its subscriber port is gone but the node lives: we take back what the
// queue still holds (we may read the ring as its one consumer now).
[[nodiscard]] constexpr bool takes_back_queued(Departure d) noexcept {
  return d == Departure::PortDestroyed;
}
// A previous ferryd's queue: its reader learns from the ring alone that
// nothing more comes.
[[nodiscard]] constexpr bool closes_ring(Departure d) noexcept {
  return d == Departure::Replaced || d == Departure::OldPeerDied;
}

// Handed over and not applied yet.
[[nodiscard]] constexpr bool incoming(PublisherQueueState s) noexcept {
  return s == PublisherQueueState::Incoming || s == PublisherQueueState::Replacing;
}

// Whether the table above has the move from -> to.
[[nodiscard]] constexpr bool publisher_queue_move_legal(PublisherQueueState from,
                                                        PublisherQueueState to) noexcept {
  using enum PublisherQueueState;
  switch (to) {
    case Active:
      return incoming(from);
    case Retired:
      return from == Active;
    case Buried:
      return incoming(from) || from == Active;
    case Incoming:
    case Replacing:
      return false;  // first states only
  }
  return false;
}

// The one way a publisher queue's state changes.
inline void advance(PublisherQueueState& state, PublisherQueueState to) noexcept {
  FERRY_CHECK(publisher_queue_move_legal(state, to),
              "a publisher queue's state moved against its table");
  state = to;
}

}  // namespace ferry::detail
