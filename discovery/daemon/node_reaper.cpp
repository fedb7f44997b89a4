#include "node_reaper.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "ferry/discovery/node_lock.hpp"

namespace ferry::discovery {

std::filesystem::path NodeReaper::lock_path(std::uint16_t owner) const {
  return node_lock_path(domain_, owner, runtime_dir_);
}

bool NodeReaper::process_alive(std::uint16_t owner) const {
  const HeartbeatSlot* slot = beats_.slot(owner);
  // SYNC: relaxed; ferryd's own store (or its predecessor's, long done).
  const pid_t pid = slot != nullptr ? slot->pid.load(std::memory_order_relaxed) : 0;
  return node_process_alive(lock_path(owner), pid);
}

void NodeReaper::node_died(std::uint16_t owner, SlotState state) {
  HeartbeatSlot* slot = beats_.slot(owner);
  if (slot == nullptr || pool_ == nullptr) return;
  // SYNC: release, pairs with the node's acquire load of its state (a node
  // woken after being declared dead sees it before it acts again); and it
  // is stored before any reclaim, so that a ferryd killed from here on
  // leaves the slot for its successor to finish.
  slot->state.store(static_cast<std::uint32_t>(state), std::memory_order_release);
  const bool gone = !process_alive(owner);
  reclaim(owner, gone);
  if (gone) {
    finish(owner);
  } else if (std::find(waiting_.begin(), waiting_.end(), owner) == waiting_.end()) {
    waiting_.push_back(owner);
  }
}

void NodeReaper::tick() {
  std::erase_if(waiting_, [this](std::uint16_t owner) {
    if (process_alive(owner)) return false;
    // Its process is gone: nothing of it runs any more. Its half-done
    // allocations can be undone, and what it gave to dead nodes since the
    // first reclaim (it was only stopped) is dropped.
    reclaim(owner, true);
    finish(owner);
    return true;
  });
}

void NodeReaper::reclaim(std::uint16_t owner, bool process_gone) {
  // A receiver is dead when its slot is not alive: owner ids are never
  // reused, so a free slot is a dead node's (or nobody's, holding nothing).
  const auto dead_receiver = [this](transport::OwnerId receiver) {
    const HeartbeatSlot* s = beats_.slot(receiver);
    // SYNC: relaxed; only ferryd writes states, and this is ferryd.
    return s != nullptr &&
           s->state.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(SlotState::alive);
  };
  const auto r = pool_->reclaim_owner(owner, process_gone, dead_receiver);
  if (r.refs_dropped > 0 || r.chunks_freed > 0 || r.given_dropped > 0 || r.claims_undone > 0) {
    spdlog::info(
        "reclaimed node slot {}: {} reference(s) it held, {} it gave to dead nodes, {} "
        "half-done allocation(s); {} chunk(s) freed",
        owner, r.refs_dropped, r.given_dropped, r.claims_undone, r.chunks_freed);
  }
}

void NodeReaper::finish(std::uint16_t owner) {
  if (HeartbeatSlot* slot = beats_.slot(owner)) {
    // SYNC: relaxed; nobody waits on a free slot, its process is gone, and
    // ferryd gives the id again only after reading this (recycle_owner_ids).
    slot->state.store(static_cast<std::uint32_t>(SlotState::free), std::memory_order_relaxed);
  }
  // After the slot is free: a ferryd killed in between leaves only a stale
  // file (removed when the domain is cleaned), never a slot without its lock.
  remove_node_lock(lock_path(owner));
}

void NodeReaper::remove_all_locks() const { (void)remove_node_locks(domain_, runtime_dir_); }

}  // namespace ferry::discovery
