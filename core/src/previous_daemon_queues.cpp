// What a port does across a ferryd restart (previous_daemon_queues.hpp): its queues
// become old peers, a re-registered peer's new queue replaces its old one,
// and an old peer found dead is retired. Runtime thread, except
// apply_aging() (the user's thread, in apply_changes).
#include "previous_daemon_queues.hpp"

#include <mutex>
#include <vector>

#include "publisher_state.hpp"
#include "subscriber_state.hpp"

namespace ferry::detail {

// ---- the old peers -------------------------------------------------------------

void OldPeers::begin(const std::map<std::uint64_t, PeerOf>& current,
                     const std::set<std::uint64_t>& observers) {
  for (const auto& [peer, of] : current) {
    peers_[peer] = OldPeer{of.owner, of.identity, false, observers.contains(peer)};
  }
}

// ---- publisher -------------------------------------------------------------------

void PublisherState::age_queues() {
  old_peers_.begin(peer_owners_, observer_peers_);
  peer_owners_.clear();
  observer_peers_.clear();
}

std::vector<QueueLeaving> PublisherState::replaced_queues(std::uint64_t peer_identity) {
  // The same subscriber, re-registered with the new ferryd: the new queue
  // takes over from the old one (closed once we stop writing it), and the
  // subscriber count stays.
  std::vector<QueueLeaving> replaced;
  old_peers_.adopt(peer_identity, [&](std::uint64_t peer, const OldPeer& old) {
    replaced.push_back(old_queue_leaving(peer, old.owner, false));
  });
  return replaced;
}

QueueLeaving PublisherState::old_queue_leaving(std::uint64_t peer, transport::NodeSlot owner,
                                               bool peer_gone) {
  // A replaced queue is still read (its subscriber drains it first): a
  // push waiting for room there will get it. A dead reader's will not.
  if (peer_gone) {
    (void)queues_.abandon(peer);
    return QueueLeaving{peer, Departure::OldPeerDied, owner};
  }
  (void)queues_.release(peer);
  return QueueLeaving{peer, Departure::Replaced, transport::NodeSlot{0}};
}

void PublisherState::check_old_peers(const std::function<bool(transport::NodeSlot)>& alive) {
  old_peers_.forget_if([&](std::uint64_t peer, const OldPeer& old) {
    const bool node_gone = !alive(old.owner);
    // A replaced queue was counted and retired when its replacement came.
    if (old.replaced) return node_gone;
    // Its subscriber port was destroyed while no ferryd could tell us (or
    // the previous one could not send the Unmatched): the ring says so.
    const bool reader_left = !node_gone && handed_reader_left(peer);
    if (!node_gone && !reader_left) return false;
    // SYNC: relaxed; a count for the user.
    (old.observer ? observers : matched).fetch_sub(1, std::memory_order_relaxed);
    const QueueLeaving leaving =
        node_gone ? old_queue_leaving(peer, old.owner, true) : reader_left_leaving(peer);
    {
      std::lock_guard lock(mutex_);
      queues_.announce_leaving(lock, leaving);
    }
    announce_change();
    return true;
  });
}

bool PublisherState::handed_reader_left(std::uint64_t peer) const noexcept {
  const PublisherQueueEnd* const q = queues_.handed(peer);
  return q != nullptr && q->producer.reader_left();
}

QueueLeaving PublisherState::reader_left_leaving(std::uint64_t peer) {
  if (const PublisherQueueEnd* const q = queues_.abandon(peer)) {
    // The previous ferryd's ring: the daemon now running does not know its
    // name, and its reader is gone; our mapping stays until the user's
    // thread drops the queue.
    transport::Segment::remove(q->queue_segment.name());
  }
  // As for a destroyed port: its reader is gone, we take back what is queued.
  return QueueLeaving{peer, Departure::PortDestroyed, transport::NodeSlot{0}};
}

// ---- subscriber ------------------------------------------------------------------

void SubscriberState::age_queues() {
  std::lock_guard lock(mutex_);
  old_peers_.begin(peer_owners_, {});
  for (const auto& [peer, of] : peer_owners_) aging_.push_back(peer);
  finished_old_.reserve(finished_old_.size() + peer_owners_.size());
  peer_owners_.clear();
  announce_change();
}

bool SubscriberState::replaces_old_queue(SubscriberQueueEnd& added) {
  if (!old_peers_.adopt(added.peer_identity, [](std::uint64_t, const OldPeer&) {})) return false;
  // The same publisher, re-registered with the new ferryd: read this queue
  // only after the old ones, which it closes when it switches. Its first
  // state (queue_state.hpp), set before the hand-over.
  added.state = QueueState::Waiting;
  return true;
}

void SubscriberState::check_old_peers(const std::function<bool(transport::NodeSlot)>& alive) {
  // Old queues the user's thread dropped because their publisher closed
  // them: replaced (counted by the replacement), or the publisher port was
  // destroyed while no ferryd could tell us: then it is no longer matched.
  std::vector<std::uint64_t> finished;
  {
    std::lock_guard lock(mutex_);
    if (!finished_old_.empty()) {
      finished.assign(finished_old_.begin(), finished_old_.end());
      finished_old_.clear();
    }
  }
  for (std::uint64_t done : finished) {
    old_peers_.forget_if([&](std::uint64_t peer, const OldPeer& old) {
      if (peer != done) return false;
      // SYNC: relaxed; a count for the user.
      if (!old.replaced) matched.fetch_sub(1, std::memory_order_relaxed);
      return !old.replaced;  // a replaced one's node death is still watched
    });
  }
  bool changed = false;
  old_peers_.forget_gone(alive, [&](std::uint64_t peer, const OldPeer& old) {
    // Its publisher died while no ferryd watched: what it queued is still
    // delivered, then the queue goes (and a queue waiting for it starts).
    pool->peer_died(old.owner);
    if (!old.replaced) matched.fetch_sub(1, std::memory_order_relaxed);  // SYNC: a count
    {
      std::lock_guard lock(mutex_);
      leaving_.push_back(peer);
    }
    changed = true;
  });
  if (changed) {
    announce_change();
    transport::doorbell_notify(*bell_);
  }
}

void SubscriberState::apply_aging() noexcept {
  for (std::uint64_t peer : aging_) active_.age(peer);
  aging_.clear();
}

}  // namespace ferry::detail
