#pragma once
// This process's mapping of the domain's loaned-memory pool, shared by the
// ports of one node (and kept alive by samples that outlive them), with the
// node's owner id: every reference the node holds is attributed to it, so
// ferryd can reclaim them all if the process dies.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "ferry/detail/lane.hpp"
#include "ferry/discovery/node_lock.hpp"
#include "ferry/transport/pool.hpp"
#include "ferry/transport/segment.hpp"
#include "lock_order.hpp"

namespace ferry::detail {

struct DomainPoolView {
  DomainPoolView(transport::Segment segment_, transport::Pool pool_, transport::NodeSlot owner_);
  ~DomainPoolView();
  DomainPoolView(const DomainPoolView&) = delete;
  DomainPoolView& operator=(const DomainPoolView&) = delete;

  transport::Segment segment;
  transport::Pool pool;
  transport::NodeSlot owner;
  // Held while anything of ours may act as `owner` (ports, samples): ferryd
  // takes its release for the end of this owner's process (node_lock.hpp).
  discovery::NodeLock lock;
  // Whose the domain's objects must be: ferryd's uid (SO_PEERCRED of its
  // socket), never wider than group access. A planted object is refused.
  transport::ObjectOwner daemon_owner{};

  // The node's slot state in the domain's heartbeat table (null without
  // one): ports look at it on every publish/take, so that a node woken up
  // after ferryd declared it dead stops at once, before its runtime thread
  // even runs. Read-mostly: only ferryd writes it.
  std::optional<transport::Segment> beats_segment;
  const std::atomic<std::uint32_t>* node_state = nullptr;
  [[nodiscard]] bool declared_dead() const noexcept { return node_state_says_dead(node_state); }

  // Set in a forked child (fork_guard.hpp): the node is the parent's; its
  // mappings are private copies and its ports refuse with InheritedNode.
  // SYNC: relaxed; written only by the child's fork handler, before the
  // child has other threads.
  std::atomic<bool> inherited{false};
  [[nodiscard]] bool is_inherited() const noexcept {
    return inherited.load(std::memory_order_relaxed);
  }

  // Throws std::runtime_error naming the object when it cannot be opened.
  static std::shared_ptr<DomainPoolView> open(const std::string& domain, transport::NodeSlot owner,
                                              const transport::ObjectOwner& daemon_owner);

  // Queues from publishers of other nodes into this node's subscribers. A
  // publisher killed between giving a reference and pushing it (or just
  // after drop_oldest discarded one) leaves a pending reference no ring
  // names; only this node can tell, once it has drained every queue that
  // dead node fed it, and then settles them (docs/design/pool.md). Not on
  // the hot path: called when queues come and go.
  void queue_opened(transport::NodeSlot peer);  // a subscriber queue from `peer` is mapped
  void queue_closed(transport::NodeSlot peer);  // ... is drained and dropped, or abandoned
  void peer_died(transport::NodeSlot peer);     // ferryd said `peer`'s node is gone

 private:
  struct PeerQueues {
    std::uint32_t open = 0;
    bool dead = false;
  };
  void settle_if_done(transport::NodeSlot peer, PeerQueues& entry);  // under peers_mutex_
  RankedMutex<LockRank::PoolPeers> peers_mutex_;                     // the last in the lock order
  std::map<transport::NodeSlot, PeerQueues> peers_;
};

}  // namespace ferry::detail
