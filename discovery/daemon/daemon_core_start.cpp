// DaemonCore at start: a fresh heartbeat table, or the adoption of a
// previous ferryd's (its nodes live on and reconnect). The shell makes or
// opens the shared memory (daemon_io_start.cpp); the core decides what the
// table's slots and counters mean.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon_core.hpp"
#include "resumed_ids.hpp"

namespace ferry::discovery {

void DaemonCore::write_liveness_header() {
  beats_.header().heartbeat_ms = liveness_config_.heartbeat_ms;
  beats_.header().timeout_ms = liveness_config_.timeout_ms;
}

void DaemonCore::start_fresh(HeartbeatTable beats, const PoolFacts& pool, std::uint64_t now) {
  beats_ = beats;
  pool_ = pool;
  // The segment is zero-filled: every slot is free. Plain fields before the
  // shell seals it, whose release store of the magic publishes them to
  // openers.
  write_liveness_header();
  beats_.header().slot_count = kHeartbeatSlots;
  liveness_.attach(beats_);
  save_counters();
  // SYNC: relaxed; clients read it as a number.
  beats_.header().daemon_beat_ms.store(now, std::memory_order_relaxed);
}

std::vector<NodeLiveness::Death> DaemonCore::adopt_slots(HeartbeatTable beats) {
  adopted_highest_ = 0;
  for (std::uint32_t owner = 1; owner < kHeartbeatSlots; ++owner) {
    // SYNC: relaxed; the previous daemon is gone, its stores long done.
    if (beats.slot(owner)->state.load(std::memory_order_relaxed) != 0) adopted_highest_ = owner;
  }
  return liveness_.adopt(beats);
}

std::size_t DaemonCore::finish_adoption(HeartbeatTable beats, const PoolFacts& pool,
                                        std::uint64_t highest_named_id, std::uint64_t now) {
  beats_ = beats;
  pool_ = pool;
  const std::size_t dead = liveness_.finish_adoption();
  // SYNC: relaxed; only ferryd writes the counters.
  node_slots_.continue_from(
      std::max(beats_.header().next_owner.load(std::memory_order_relaxed), adopted_highest_ + 1));
  // SYNC: relaxed, as above. Shared memory: checked against the domain's
  // objects before it is trusted (resumed_ids.hpp).
  const std::uint64_t stored_id = beats_.header().next_id.load(std::memory_order_relaxed);
  const ResumedIds ids = resume_ids(stored_id, highest_named_id);
  if (!ids.recovered_because.empty()) {
    spdlog::warn(
        "the shared registry of domain '{}' says port ids go on from {}, which cannot be ({}); "
        "going on from {}, past every id its queues and doorbells name",
        domain(), stored_id, ids.recovered_because, ids.next);
  }
  registry_.continue_ids_from(ids.next);
  write_liveness_header();
  retire_adopted_slots();
  // SYNC: relaxed; clients read it as a number.
  beats_.header().daemon_beat_ms.store(now, std::memory_order_relaxed);
  return dead;
}

void DaemonCore::retire_adopted_slots() {
  for (std::uint32_t owner = 1; owner < node_slots_.next_fresh() && owner < kHeartbeatSlots;
       ++owner) {
    const auto id = static_cast<std::uint16_t>(owner);
    if (liveness_.state(id) == NodeState::Orphan) continue;
    const HeartbeatSlot* slot = beats_.slot(owner);
    // SYNC: relaxed; the previous daemon is gone, its stores long done.
    node_slots_.retire(id, slot != nullptr ? slot->pid.load(std::memory_order_relaxed) : 0);
  }
}

}  // namespace ferry::discovery
