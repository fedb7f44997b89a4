#include "node_liveness.hpp"

#include <spdlog/spdlog.h>

#include <iterator>

namespace ferry::discovery {

const char* to_string(NodeState state) noexcept {
  switch (state) {
    case NodeState::Free:
      return "free";
    case NodeState::Alive:
      return "alive";
    case NodeState::DeclaredDead:
      return "declared dead";
    case NodeState::Reclaiming:
      return "reclaiming";
    case NodeState::Orphan:
      return "orphan";
  }
  return "?";
}

void NodeLiveness::attach(HeartbeatTable beats) noexcept {
  beats_ = beats;
  slots_.clear();
}

void NodeLiveness::write(std::uint16_t owner, SlotState word, std::memory_order order) {
  if (HeartbeatSlot* s = beats_.slot(owner)) {
    s->state.store(static_cast<std::uint32_t>(word), order);
  }
}

std::vector<NodeLiveness::Death> NodeLiveness::adopt(HeartbeatTable beats) {
  attach(beats);
  std::vector<Death> orphans;
  for (std::uint32_t owner = 1; owner < kHeartbeatSlots; ++owner) {
    const HeartbeatSlot* s = beats_.slot(owner);
    // SYNC: relaxed; the previous daemon is gone, its stores long done.
    const auto word = static_cast<SlotState>(s->state.load(std::memory_order_relaxed));
    if (word == SlotState::Free) continue;
    const auto id = static_cast<std::uint16_t>(owner);
    const pid_t pid = s->pid.load(std::memory_order_relaxed);
    // Its lock says whether its process lives, in whatever pid namespace.
    if (word == SlotState::Alive && actions_.process_alive(id, pid)) {
      slots_[id] = {NodeState::Orphan, pid, false, false};
      orphans.push_back({id, pid, 0, true});
    } else {
      // Dead while no ferryd ran, or dead before the previous one finished
      // reclaiming it (the slot is freed only once that is done).
      slots_[id] = {NodeState::Reclaiming, pid, false, word == SlotState::DeclaredDead};
    }
  }
  return orphans;
}

std::size_t NodeLiveness::finish_adoption() {
  std::vector<std::uint16_t> dead;
  for (const auto& [owner, slot] : slots_) {
    if (slot.state == NodeState::Reclaiming) dead.push_back(owner);
  }
  for (const std::uint16_t owner : dead) reclaim(owner, slots_.at(owner));
  return dead.size();
}

void NodeLiveness::joined(std::uint16_t owner, pid_t pid, std::uint64_t now) {
  slots_[owner] = {NodeState::Alive, pid, false, false};
  if (HeartbeatSlot* s = beats_.slot(owner)) {
    // The node has timeout_ms from now to start beating. SYNC: relaxed; the
    // node reads only `state`, after the Welcome (a socket round trip
    // orders it); ferryd alone reads the rest.
    s->pid.store(static_cast<std::int32_t>(pid), std::memory_order_relaxed);
    s->beat_ms.store(now, std::memory_order_relaxed);
    s->state.store(static_cast<std::uint32_t>(SlotState::Alive), std::memory_order_relaxed);
  }
}

bool NodeLiveness::resumed(std::uint16_t owner, pid_t pid) {
  auto it = slots_.find(owner);
  if (owner == 0 || it == slots_.end() || it->second.state != NodeState::Orphan ||
      it->second.pid != pid) {
    return false;
  }
  it->second.state = NodeState::Alive;
  return true;
}

void NodeLiveness::set_must_beat(std::uint16_t owner, bool must_beat) {
  if (auto it = slots_.find(owner); it != slots_.end()) it->second.must_beat = must_beat;
}

void NodeLiveness::left(std::uint16_t owner) {
  auto it = slots_.find(owner);
  if (it == slots_.end()) return;
  Slot& slot = it->second;
  if (slot.state != NodeState::Alive && slot.state != NodeState::DeclaredDead) return;
  reclaim(owner, slot);
}

void NodeLiveness::reclaim(std::uint16_t owner, Slot& slot) {
  slot.state = NodeState::Reclaiming;
  // SYNC: release, pairs with the node's acquire load of its state (a node
  // woken after being declared dead sees it before it acts again); and it
  // is stored before any reclaim, so that a ferryd killed from here on
  // leaves the slot for its successor to finish.
  write(owner, slot.declared ? SlotState::DeclaredDead : SlotState::Reclaiming,
        std::memory_order_release);
  const bool gone = !actions_.process_alive(owner, slot.pid);
  actions_.reclaim(owner, gone);
  if (gone) finish(owner);  // else a later probe finds it gone
}

void NodeLiveness::finish(std::uint16_t owner) {
  slots_.erase(owner);
  // SYNC: relaxed; nobody waits on a free slot, its process is gone, and
  // ferryd gives the id again only after reading this (recycle_node_slots).
  write(owner, SlotState::Free, std::memory_order_relaxed);
  // After the slot is free: a ferryd killed in between leaves only a stale
  // file (removed when the domain is cleaned), never a slot without its lock.
  actions_.released(owner);
}

std::vector<NodeLiveness::Death> NodeLiveness::tick(std::uint64_t now) {
  std::vector<Death> deaths;
  const bool probe = now - last_probe_ >= kProbePeriodMs;
  if (probe) last_probe_ = now;
  for (auto& [owner, slot] : slots_) {
    switch (slot.state) {
      case NodeState::Alive:
        if (!slot.must_beat) break;
        if (const std::uint64_t silent = silent_ms(owner, now); silent > timeout_ms_) {
          slot.state = NodeState::DeclaredDead;
          slot.declared = true;
          // SYNC: release, pairs with the node's acquire load of its state:
          // a node that wakes up sees it was declared dead.
          write(owner, SlotState::DeclaredDead, std::memory_order_release);
          deaths.push_back({owner, slot.pid, silent, false});
        }
        break;
      case NodeState::Orphan:
        // A node of the previous ferryd that froze or died before reconnecting.
        if (const std::uint64_t silent = silent_ms(owner, now); silent > timeout_ms_) {
          slot.declared = true;
          deaths.push_back({owner, slot.pid, silent, true});
        } else if (probe && !actions_.process_alive(owner, slot.pid)) {
          deaths.push_back({owner, slot.pid, 0, true});
        }
        break;
      case NodeState::Reclaiming:    // probed below
      case NodeState::DeclaredDead:  // the daemon drops it (left) after this tick
      case NodeState::Free:
        break;
    }
  }
  if (probe) probe_waiting();
  for (const Death& d : deaths) {
    if (d.orphan) reclaim(d.owner, slots_.at(d.owner));
  }
  return deaths;
}

void NodeLiveness::probe_waiting() {
  std::vector<std::uint16_t> gone;
  for (const auto& [owner, slot] : slots_) {
    if (slot.state == NodeState::Reclaiming && !actions_.process_alive(owner, slot.pid)) {
      gone.push_back(owner);
    }
  }
  for (const std::uint16_t owner : gone) {
    // Its process is gone: nothing of it runs any more. Its half-done
    // allocations can be undone, and what it gave to dead nodes since the
    // first reclaim (it was only stopped) is dropped.
    actions_.reclaim(owner, true);
    finish(owner);
  }
}

NodeState NodeLiveness::state(std::uint16_t owner) const {
  auto it = slots_.find(owner);
  return it == slots_.end() ? NodeState::Free : it->second.state;
}

std::uint64_t NodeLiveness::silent_ms(std::uint16_t owner, std::uint64_t now) const {
  const HeartbeatSlot* s = beats_.slot(owner);
  if (s == nullptr) return 0;
  // SYNC: relaxed; a number from another process, compared with the clock.
  const std::uint64_t beat = s->beat_ms.load(std::memory_order_relaxed);
  return now > beat ? now - beat : 0;
}

bool NodeLiveness::process_alive(std::uint16_t owner) {
  auto it = slots_.find(owner);
  return it != slots_.end() && actions_.process_alive(owner, it->second.pid);
}

std::size_t NodeLiveness::waiting() const {
  std::size_t n = 0;
  for (const auto& [owner, slot] : slots_) n += slot.state == NodeState::Reclaiming ? 1 : 0;
  return n;
}

}  // namespace ferry::discovery
