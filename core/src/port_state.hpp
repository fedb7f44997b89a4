#pragma once
// The state behind a port: its queues and its session with ferryd, shared
// by the user's thread (the hot path), the node's runtime thread (ferryd's
// Matched/Unmatched, restarts, death sentences) and ferryd itself (our
// node's heartbeat slot).
//
// Handing over connections without a lock on the hot path: the runtime
// thread maps and attaches a new ring, queues it under `mutex_` and bumps
// `changes` (release). publish()/take() compare `changes` with the value they
// last saw (one acquire load) and only on a difference take the mutex and
// apply the queue. The active list is touched by the user's thread alone, so
// a ring is unmapped only when that thread has dropped it. Applying a change
// also rebuilds the port's lane (ferry/detail/lane.hpp), the shortcut its
// inlined publish()/take() use while nothing changes.
//
// ---- State machines -----------------------------------------------------
// "runtime": the node's runtime thread (NodeRuntime::serve); "user": the
// thread that uses the port. A transition through a hand-over list is
// queued by the runtime thread under mutex_ and takes effect when the user's
// thread applies it (apply_changes, after the acquire load of `changes`).
//
// Port session (session_, PortSession; shared: runtime writes, user reads)
//   from  to    function              thread   when
//   Live  Live  mark_queues_old()     runtime  a restarted ferryd adopted the node: every queue
//                                              becomes an old peer (previous_daemon_queues.hpp)
//   Live  Dead  mark_dead()           runtime  ferryd declared the node dead, or restarted
//   Dead  Dead  mark_dead()           runtime    without its state (a repeated sentence: no-op)
// The user's side (dead_seen; user only) follows, once and for good:
//   false true  apply_changes()       user     session_ is Dead, or ferryd's declared_dead in
//                                              our heartbeat slot (it may come first): every
//                                              queue is dropped, publish/take report the error
//
// Publisher queue (PublisherQueueEnd): where it is listed is its hand-over,
// its PublisherQueueState (publisher_queue_state.hpp: Incoming or Replacing,
// Active, Retired, Buried) its life once the user's thread has it; one
// PublisherQueueSet (publisher_queue_set.hpp) owns the lists and the moves.
//   from       to        function               thread   list
//   -          Incoming  on_matched()           runtime  incoming_ (mutex_), handed_; its first
//                                                        state is Replacing when it replaces an
//                                                        old queue
//   Incoming   Active    apply_changes()        user     active_
//   Incoming,  (same)    on_unmatched(),        runtime  its leaving to leaving_ (mutex_); out
//   Active               old_queue_leaving(),            of handed_ (a push blocked on it is
//                        reader_left_leaving()           released first when its reader is gone)
//   Active     Retired   apply_changes()        user     out of active_: emptied or closed as
//                                                        its Departure says, then freed
//   (any)      (same)    mark_dead()            runtime  out of handed_, a push blocked on it
//                                                        released
//   Incoming,  Buried    apply_changes(), dead  user     graveyard_ (freed with the port)
//   Active
// Its history hand-off (`history`, HistoryClaim: shared) is a machine of its
// own, in history_handoff.hpp.
//
// Subscriber queue (SubscriberQueueEnd): where it is listed is its hand-over,
// its QueueState (queue_state.hpp: Live, Waiting, Old, Closed and their
// combinations, Dropped) its life once the user's thread has it.
//   from      to        function               thread   list
//   -         Incoming  on_matched()           runtime  incoming_ (mutex_); its first state
//                                                        is Waiting when it replaces an old
//                                                        queue, else Live
//   Incoming  Active    apply_changes()        user     active_ (QueueSet)
//   Active    (state)   apply_changes(), from  user     the state moves (QueueSet::age,
//                       aging_ and leaving_              close); the rest in QueueSet::round
//   Active    dropped   QueueSet::drop_drained user     out of active_: Closed and empty
//                       or clear()                       (an Old queue's ring name is removed),
//                                                        or the session ended
// Apart from the hand-over lists the queue's fields are the user's thread's
// alone: plain fields.
//
// ---- Ownership ------------------------------------------------------------
// field                  written by          lock     published to readers by
// PortState
//   domain, topic, config, runtime, at         -        immutable; the state reaches the user's
//   pool, inline_max,      construction                 thread through NodeRuntime::mutex_
//   publisher_id, request  (request just after it)      (replies_)
//   port_id                runtime             NodeRuntime::mutex_  read under it
//   matched, observers     runtime             -        relaxed: counts for the user, nothing
//                                                       is published through them
//   session_               runtime             -        relaxed store; announce_change()'s
//                                                       release publishes it, read relaxed after
//                                                       the acquire in LaneGuard::changed()
//   guard_.changes         runtime             -        release fetch_add (announce_change), pairs
//                                                       with the acquire load in changed() and
//                                                       changes_announced(): the lists are complete
//   guard_.seen, dead_seen user                -        user only
//   guard_.node_state      ferryd (the word)   -        relaxed; lane.hpp's node_state_says_dead
//   peer_owners_           runtime             -        runtime only
//   matched_so_far_
// PublisherState (its queues_, PublisherQueueSet)
//   incoming_, leaving_    runtime appends,    mutex_   the mutex (and `changes`, above)
//                          user drains
//   graveyard_             user                mutex_   user only (and the destructor)
//   old_peers_, handed_,   runtime             -        runtime only
//   observer_peers_
//   history_               user (record)       -        per-entry seqlock (history.hpp); the
//                                                       runtime thread reads it in hand_history
//   active_, full_, lane_, user                -        user only
//   subscriber_queues_
// PublisherQueueEnd
//   peer, peer_owner,      runtime, at         -        immutable; through incoming_ (mutex_)
//   segments, observer     construction
//   state                  runtime (first),    -        through incoming_ (mutex_), then user only
//                          then user
//   producer, history_next runtime (Serving),  -        HistoryClaim: release store of Handed,
//                          then user                    acquire spin in claim_for_user()
//   abandoned              runtime (false      -        release store, pairs with the ring's
//                          to true, once)               acquire load of its abort flag
//   batch_done             user                -        user only (publish_many)
// SubscriberState
//   bell_segment_, bell_,  constructor         -        immutable (bell_'s word: doorbell.hpp)
//   held_
//   incoming_, leaving_,   runtime appends,    mutex_   the mutex (and `changes`, above)
//   aging_                 user drains
//   finished_old_          user appends (no    mutex_   the mutex; the runtime thread drains
//                          allocation), runtime         it in check_old_peers()
//   old_peers_             runtime             -        runtime only
//   active_ (with its      user                -        user only
//   round-robin start),
//   lane_, lane_queue_,
//   scratch
// SubscriberQueueEnd
//   peer, peer_owner,      runtime, at         -        immutable; through incoming_ (mutex_)
//   queue_segment,          construction
//   peer_identity,
//   match_order
//   state                  runtime (first),    -        through incoming_ (mutex_), then user only
//                          then user
//   consumer               user                -        user only
//
// Locks: mutex_ is rank 5 in lock_order.hpp. The runtime's mutex_ (3) or a
// WaitSet's (4) may be held when it is taken; under it, only the pool view's
// peers_mutex_ (6) is.

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "domain_pool_view.hpp"
#include "ferry/detail/held_samples.hpp"
#include "ferry/detail/lane.hpp"
#include "ferry/discovery/messages.hpp"
#include "ferry/error.hpp"
#include "ferry/transport/doorbell.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "ferry/transport/slot_format.hpp"
#include "history.hpp"
#include "history_handoff.hpp"
#include "lock_order.hpp"
#include "previous_daemon_queues.hpp"

namespace ferry::detail {

using transport::PooledSlot;  // what a pooled slot carries (slot_format.hpp)

// The port's session with ferryd (the table at the top).
enum class PortSession : std::uint8_t {
  Live,  // registered with a ferryd: the first, or a restarted one that adopted the node
  Dead,  // ferryd declared the node dead, or restarted without its state: final
};

class PortState {
 public:
  PortState(std::string domain, std::string topic, const discovery::PortCreated& created,
            std::shared_ptr<DomainPoolView> pool);
  virtual ~PortState() = default;
  PortState(const PortState&) = delete;
  PortState& operator=(const PortState&) = delete;

  // Runtime thread.
  virtual void on_matched(const discovery::Matched& matched) = 0;
  virtual void on_unmatched(const discovery::Unmatched& unmatched) = 0;

  // Runtime thread, after ferryd restarted and adopted the node, before the
  // port re-registers: the queues we have now belong to the previous daemon.
  // They keep working until the peer's re-registered port brings the queue
  // that replaces each one (Matched::peer_identity), or until the
  // peer is found dead (previous_daemon_queues.hpp). Live to Live.
  void mark_queues_old() {
    // SYNC: relaxed; only this thread writes session_.
    FERRY_CHECK(session_.load(std::memory_order_relaxed) == PortSession::Live,
                "mark_queues_old() on a port whose node was declared dead");
    age_queues();
  }
  // Runtime thread: drops previous-daemon queues whose peer node is gone.
  // `alive(owner)` tells whether a node (by pool owner id) still lives.
  virtual void check_old_peers(const std::function<bool(transport::NodeSlot)>& alive) = 0;
  // A subscriber's doorbell name (kept across a daemon restart); empty for
  // a publisher.
  [[nodiscard]] virtual std::string resume_doorbell() const { return {}; }

  const std::string domain;
  const std::string topic;
  // The port's first id, kept when it re-registers with a restarted ferryd
  // (PortRequest::identity): peers know the port by it whatever id
  // each daemon gave it since (ids are never reused in a domain).
  const std::uint64_t identity;
  // Written by the runtime thread under the runtime's mutex when the port
  // is re-registered with a restarted ferryd; read under that mutex.
  std::uint64_t port_id;
  // What the port was created with (for re-registering it).
  discovery::PortRequest request;
  const discovery::TopicConfig config;
  const std::shared_ptr<DomainPoolView> pool;
  // Largest sample that travels inline in a ring slot; larger ones go
  // through the pool.
  const std::uint32_t inline_max;

  // Matched peers right now, as ferryd says (runtime thread writes); a
  // publisher's observers are counted apart, in `observers`. SYNC: counts
  // for the user; a publisher's are raised with release after its queue is
  // announced (PublisherState::on_matched), the rest relaxed.
  std::atomic<std::uint32_t> matched{0};
  std::atomic<std::uint32_t> observers{0};

  // Runtime thread: ferryd declared our node dead (Live or Dead to Dead).
  // The hot path sees it at its next look at the queues (one acquire load,
  // as for any change), drops every queue and reports
  // ErrorCode::NodeDeclaredDead from then on.
  virtual void mark_dead() noexcept {
    // SYNC: relaxed; announce_change()'s release publishes it.
    session_.store(PortSession::Dead, std::memory_order_relaxed);
    matched.store(0, std::memory_order_relaxed);    // SYNC: relaxed; a count for the user
    observers.store(0, std::memory_order_relaxed);  // SYNC: relaxed; a count for the user
    announce_change();
  }
  // User's thread: true once the queues were dropped for good (the user's
  // side of the session, set by drop_for_good()).
  bool dead_seen = false;
  // What a port whose queues were dropped for good reports: its node was
  // declared dead, or it is its parent's in a forked child (fork_guard.hpp).
  [[nodiscard]] ErrorCode dead_error() const noexcept {
    return pool->is_inherited() ? ErrorCode::InheritedNode : ErrorCode::NodeDeclaredDead;
  }
  // How many changes the runtime thread announced so far (a WaitSet asks
  // whether any came since it last looked).
  [[nodiscard]] std::uint32_t changes_announced() const noexcept {
    // SYNC: acquire, pairs with the release fetch_add in announce_change().
    return guard_.changes.load(std::memory_order_acquire);
  }

 protected:
  // SYNC: release, pairs with the acquire load in LaneGuard::changed(): the
  // queued connections (under `mutex`) are complete before the hot path looks.
  void announce_change() noexcept { guard_.changes.fetch_add(1, std::memory_order_release); }
  void mark_changes_seen() noexcept {
    // SYNC: relaxed; a change announced after this load is seen next time.
    guard_.seen = guard_.changes.load(std::memory_order_relaxed);
  }

  // User's thread, in apply_changes (after the acquire in guard_.clear()):
  // whether the session ended, by the runtime thread's word or ferryd's.
  [[nodiscard]] bool session_over() const noexcept {
    // SYNC: relaxed; the acquire load of `changes` before it pairs with
    // announce_change()'s release after the store.
    return session_.load(std::memory_order_relaxed) == PortSession::Dead || pool->declared_dead();
  }
  // User's thread, in apply_changes once session_over(): false to true, once.
  void drop_for_good() noexcept {
    FERRY_CHECK(!dead_seen, "a port's queues dropped for good twice");
    dead_seen = true;
  }
  // Runtime thread: mark_queues_old()'s work, per kind of port
  // (previous_daemon_queues.cpp).
  virtual void age_queues() = 0;

  RankedMutex<LockRank::PortQueues> mutex_;  // guards the hand-over lists of the subclasses
  // Peer port -> its node's owner id and identity, for the queues we mapped
  // (runtime thread only). An Unmatched for a queue we could not map changes nothing.
  std::map<std::uint64_t, PeerOf> peer_owners_;
  // The change counter and our node's state word, read by the lanes.
  LaneGuard guard_;

 private:
  std::atomic<PortSession> session_{PortSession::Live};
  static_assert(std::atomic<PortSession>::is_always_lock_free);
};

// ---- shared by PublisherState and SubscriberState ---------------------------

// Opens a segment ferryd made; `owner`: ferryd's uid and mode (an object
// another user planted is refused). Throws std::runtime_error.
transport::Segment open_segment(const std::string& name, transport::SegmentKind kind,
                                std::uint32_t version, const transport::ObjectOwner& owner);
// The doorbell word in a mapped doorbell segment. Throws when it is too small.
transport::DoorbellWord* doorbell_in(transport::Segment& segment);

}  // namespace ferry::detail
