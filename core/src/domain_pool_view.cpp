#include "domain_pool_view.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "ferry/discovery/objects.hpp"
#include "fork_guard.hpp"
#include "log_gate.hpp"

namespace ferry::detail {

DomainPoolView::DomainPoolView(transport::Segment segment_, transport::Pool pool_,
                               transport::NodeSlot owner_)
    : segment(std::move(segment_)), pool(std::move(pool_)), owner(owner_) {
  watch_across_fork(*this);
}

DomainPoolView::~DomainPoolView() { unwatch_across_fork(*this); }

std::shared_ptr<DomainPoolView> DomainPoolView::open(const std::string& domain,
                                                     transport::NodeSlot owner,
                                                     const transport::ObjectOwner& daemon_owner) {
  const std::string name = discovery::pool_object_name(domain);
  auto segment = transport::Segment::open(name, discovery::kPoolKind, transport::kPoolLayoutVersion,
                                          discovery::kOpenTimeout,
                                          transport::SegmentAccess::ReadWrite, daemon_owner);
  if (!segment && segment.error() == transport::SegmentError::Untrusted) {
    throw std::runtime_error(transport::untrusted_name(name, daemon_owner)
                                 .value_or("the pool /dev/shm/" + name + " is not ferryd's"));
  }
  if (!segment) {
    throw std::runtime_error(fmt::format("cannot open the pool '{}' of domain '{}': {}", name,
                                         domain, transport::to_string(segment.error())));
  }
  auto pool = transport::Pool::attach(segment->payload(), segment->payload_size());
  if (!pool) {
    throw std::runtime_error(
        fmt::format("the pool '{}' is not usable: {}", name, transport::to_string(pool.error())));
  }
  if (owner == transport::kNoNodeSlot) {
    throw std::runtime_error("ferryd gave this node no pool owner id");
  }
  auto view = std::shared_ptr<DomainPoolView>(
      new DomainPoolView(std::move(*segment), std::move(*pool), owner));
  view->daemon_owner = daemon_owner;
  return view;
}

void DomainPoolView::queue_opened(transport::NodeSlot peer) {
  std::lock_guard peers_lock(peers_mutex_);
  ++peers_[peer].open;
}

void DomainPoolView::queue_closed(transport::NodeSlot peer) {
  std::lock_guard peers_lock(peers_mutex_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  if (it->second.open > 0) --it->second.open;
  settle_if_done(peer, it->second);
}

void DomainPoolView::peer_died(transport::NodeSlot peer) {
  std::lock_guard peers_lock(peers_mutex_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;  // it never fed us: it cannot have given us anything
  it->second.dead = true;
  settle_if_done(peer, it->second);
}

void DomainPoolView::settle_if_done(transport::NodeSlot peer, PeerQueues& entry) {
  if (entry.open != 0) {
    return;
  }
  if (entry.dead) {
    if (const std::uint64_t settled = pool.settle_pending(owner, peer); settled > 0) {
      log_line(spdlog::level::debug,
               "settled {} reference(s) the dead node (owner {}) gave but never queued", settled,
               peer);
    }
  }
  // ferryd reuses an owner id only after we acknowledged its node's death:
  // a node with no queue left needs no entry (a new queue makes one again).
  peers_.erase(peer);
}

}  // namespace ferry::detail
