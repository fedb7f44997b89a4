#pragma once
// A port's queues across a ferryd restart (the runtime thread's bookkeeping;
// the methods that use it are in previous_daemon_queues.cpp).
//
// A restarted ferryd that adopted our node (same owner id, our pool state
// kept) knows nothing of the queues the previous one set up. The node
// re-registers every port (NodeRuntime::reconnect), and each port first
// calls mark_queues_old(): every queue it has becomes an old peer. The queues
// keep working. An old peer ends in one of two ways:
//
//   from     to        when                                    function (runtime thread)
//   (queue)  Old       ferryd restarted, port re-registers     mark_queues_old()
//   Old      Replaced  the peer's re-registered port's queue   OldPeers::adopt(), from on_matched
//                      arrives (Matched::peer_identity: the peer's identity)
//   Old      gone      the peer's node is found dead            OldPeers::forget_gone(), from
//   Replaced gone        (heartbeat slot, then node lock)         check_old_peers()
//   Old      gone      a publisher's reader left the ring (its  OldPeers::forget_if(), from
//                        subscriber port was destroyed, maybe    PublisherState::check_old_peers()
//                        while no ferryd ran: nobody else says)
//
// What each side does with a replaced queue keeps the publisher's order: the
// publisher stops writing the old ring and closes it (old_queue_leaving); the
// subscriber reads the new queue only once the old one is finished and
// drained (the new one is Waiting till then, queue_state.hpp), then removes
// the old ring's name, which the new daemon does not know. A dead peer's old queue is
// retired as an Unmatched would (counts down, and a push waiting on it gives
// up); a replaced one was counted once, by its replacement's Matched.
//
// Why a subscriber never sees a publisher's sample twice or out of order
// across the switch (old queue A, its replacement B):
//  1. The publisher's runtime thread hands B and A's leaving (close_ring) to
//     the user's thread under one lock (PublisherState::on_matched), so
//     apply_changes takes both in one step: every publish() before it writes
//     A (never B), every one after it writes B (never A). Handed over apart,
//     a publish() in between wrote A and B: samples twice.
//  2. apply_changes closes A (RingProducer::close: release store of
//     `closed`) after A's last push (program order) and before B's first.
//  3. The subscriber reads B only once A has left its QueueSet (B is
//     Waiting till then), which happens only when A is finished (acquire load of
//     `closed`, pairing with 2: A's tail as of the close is visible) and
//     drained. So every sample of A is taken before any of B, and B holds
//     only samples published after A's last.
//  4. B gets no history (its first state is Replacing,
//     publisher_queue_state.hpp): A had the history when it was matched,
//     and every sample published since.

#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "ferry/transport/pool.hpp"

namespace ferry::detail {

// A matched peer port, as the runtime thread knows it.
struct PeerOf {
  transport::NodeSlot owner = 0;  // its node
  // Its port's first id, kept across ferryd restarts (PortState::identity):
  // the same peer whatever id each daemon gave it since.
  std::uint64_t identity = 0;
};

// A queue set up by a previous ferryd.
struct OldPeer {
  transport::NodeSlot owner = 0;
  std::uint64_t identity = 0;  // the peer port's PeerOf::identity
  bool replaced = false;       // the peer's re-registered port brought the queue that replaces it
  bool observer = false;       // the peer is an observer (not counted in `matched`)
};

// The old peers of one port, by the peer port id their queue was matched
// with. Runtime thread only.
class OldPeers {
 public:
  // mark_queues_old(): `current` (peer port -> its node and identity) are now
  // the previous daemon's queues; peers in `observers` are observers.
  void begin(const std::map<std::uint64_t, PeerOf>& current,
             const std::set<std::uint64_t>& observers);

  // A Matched whose peer has `identity`: every old queue of that peer not
  // replaced yet is Replaced now, and adopted(peer port, old) called for
  // each. False if none (a new peer, or one replaced already). Keyed by
  // identity, not by the id the peer had under the previous daemon: a
  // ferryd killed while the nodes re-registered may have given the peer an
  // id we never heard of (its Matched to us never sent).
  template <class Adopted>
  bool adopt(std::uint64_t identity, Adopted&& adopted) {
    bool any = false;
    for (auto& [peer, old] : peers_) {
      if (old.identity != identity || old.replaced) continue;
      old.replaced = true;
      adopted(peer, old);
      any = true;
    }
    return any;
  }

  // Forgets each old peer for which done(peer, old) returns true.
  template <class Done>
  void forget_if(Done&& done) {
    std::erase_if(peers_, [&](auto& entry) { return done(entry.first, entry.second); });
  }

  // Calls gone(peer, old) for each old peer whose node `alive` says is gone,
  // and forgets it.
  template <class Gone>
  void forget_gone(const std::function<bool(transport::NodeSlot)>& alive, Gone&& gone) {
    for (auto it = peers_.begin(); it != peers_.end();) {
      if (alive(it->second.owner)) {
        ++it;
        continue;
      }
      gone(it->first, it->second);
      it = peers_.erase(it);
    }
  }

 private:
  std::map<std::uint64_t, OldPeer> peers_;
};

}  // namespace ferry::detail
