#include "node_reaper.hpp"

#include <spdlog/spdlog.h>

#include "ferry/discovery/node_lock.hpp"

namespace ferry::discovery {

std::filesystem::path NodeReaper::lock_path(std::uint16_t owner) const {
  return node_lock_path(domain_, owner, runtime_dir_);
}

bool NodeReaper::process_alive(std::uint16_t owner, pid_t pid) {
  return node_process_alive(lock_path(owner), pid);
}

void NodeReaper::reclaim(std::uint16_t owner, bool process_gone) {
  // A receiver is dead when its slot is not alive: owner ids are never
  // reused, so a free slot is a dead node's (or nobody's, holding nothing).
  const auto dead_receiver = [this](transport::NodeSlot receiver) {
    const HeartbeatSlot* s = beats_.slot(receiver);
    // SYNC: relaxed; only ferryd writes states, and this is ferryd.
    return s != nullptr &&
           s->state.load(std::memory_order_relaxed) != static_cast<std::uint32_t>(SlotState::Alive);
  };
  if (pool_ == nullptr) return;
  const auto r = pool_->reclaim_owner(owner, process_gone, dead_receiver);
  if (r.refs_dropped > 0 || r.chunks_freed > 0 || r.given_dropped > 0 || r.claims_undone > 0) {
    spdlog::info(
        "reclaimed node slot {}: {} reference(s) it held, {} it gave to dead nodes, {} "
        "half-done allocation(s); {} chunk(s) freed",
        owner, r.refs_dropped, r.given_dropped, r.claims_undone, r.chunks_freed);
  }
}

void NodeReaper::released(std::uint16_t owner) { remove_node_lock(lock_path(owner)); }

void NodeReaper::remove_all_locks() const { (void)remove_node_locks(domain_, runtime_dir_); }

}  // namespace ferry::discovery
