// What a port does across a ferryd restart (restart_epoch.hpp): its queues
// become old peers, a re-registered peer's new queue replaces its old one,
// and an old peer found dead is retired. Serving thread, except
// apply_aging() (the user's thread, in apply_changes).
#include "restart_epoch.hpp"

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

std::vector<PublisherState::Leaving> PublisherState::replaced_queues(std::uint64_t peer_identity) {
  // The same subscriber, re-registered with the new ferryd: the new queue
  // takes over from the old one (closed once we stop writing it), and the
  // subscriber count stays.
  std::vector<Leaving> replaced;
  old_peers_.adopt(peer_identity, [&](std::uint64_t peer, const OldPeer& old) {
    replaced.push_back(old_queue_leaving(peer, old.owner, false));
  });
  return replaced;
}

PublisherState::Leaving PublisherState::old_queue_leaving(std::uint64_t peer,
                                                          transport::OwnerId owner,
                                                          bool peer_gone) {
  if (auto h = handed_.find(peer); h != handed_.end()) {
    // A replaced queue is still read (its subscriber drains it first): a
    // push waiting for room there will get it. A dead reader's will not.
    if (peer_gone) abandon(*h->second);
    handed_.erase(h);
  }
  return Leaving{peer, false, true, peer_gone ? owner : transport::OwnerId{0}};
}

void PublisherState::check_old_peers(const std::function<bool(transport::OwnerId)>& alive) {
  old_peers_.forget_gone(alive, [this](std::uint64_t peer, const OldPeer& old) {
    if (old.replaced) return;  // counted and retired when its replacement came
    // SYNC: relaxed; a count for the user.
    (old.observer ? observers : matched).fetch_sub(1, std::memory_order_relaxed);
    const Leaving leaving = old_queue_leaving(peer, old.owner, true);
    {
      std::lock_guard lock(mutex_);
      leaving_.push_back(leaving);
    }
    announce_change();
  });
}

// ---- subscriber ------------------------------------------------------------------

void SubscriberState::age_queues() {
  std::lock_guard lock(mutex_);
  old_peers_.begin(peer_owners_, {});
  for (const auto& [peer, of] : peer_owners_) aging_.push_back(peer);
  peer_owners_.clear();
  announce_change();
}

bool SubscriberState::replaces_old_queue(SubscriberConnection& added) {
  if (!old_peers_.adopt(added.peer_identity, [](std::uint64_t, const OldPeer&) {})) return false;
  // The same publisher, re-registered with the new ferryd: read this queue
  // only after the old ones, which it closes when it switches.
  added.waits_for = added.peer_identity;
  return true;
}

void SubscriberState::check_old_peers(const std::function<bool(transport::OwnerId)>& alive) {
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
  for (std::uint64_t peer : aging_) {
    for (auto& c : active_) {
      if (c->peer == peer) c->old_epoch = true;
    }
  }
  aging_.clear();
}

}  // namespace ferry::detail
