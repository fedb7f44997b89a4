#pragma once
// Fakes for ferryd's core and its parts, shared by their unit tests: shared
// memory that only records names, liveness actions that record what they
// were asked, and a heartbeat table on the heap.

#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <expected>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ferry/discovery/heartbeats.hpp"
#include "node_liveness.hpp"
#include "registry.hpp"

namespace ferry::discovery::test {

// Records which objects exist, as /dev/shm would.
struct FakeShm final : ShmFactory {
  std::set<std::string> objects;
  std::map<std::string, Policy> ring_policy;  // what each ring was made for
  std::expected<void, std::string> create_ring(const std::string& name, std::uint32_t,
                                               std::uint32_t, Policy policy) override {
    objects.insert(name);
    ring_policy[name] = policy;
    return {};
  }
  std::expected<void, std::string> create_doorbell(const std::string& name) override {
    objects.insert(name);
    return {};
  }
  std::expected<void, std::string> adopt_doorbell(const std::string& name) override {
    if (!objects.contains(name)) return std::unexpected("no such doorbell");
    return {};
  }
  void remove(const std::string& name) override { objects.erase(name); }
  [[nodiscard]] std::size_t rings() const {
    return static_cast<std::size_t>(
        std::count_if(objects.begin(), objects.end(),
                      [](const auto& n) { return n.find(".ring.") != std::string::npos; }));
  }
};

// The probe answers from `running`; reclaims and releases are recorded.
struct FakeActions final : LivenessActions {
  std::set<std::uint16_t> running;
  std::vector<std::pair<std::uint16_t, bool>> reclaims;  // owner, process gone
  std::vector<std::uint16_t> released_slots;
  int probes = 0;

  bool process_alive(std::uint16_t owner, pid_t) override {
    ++probes;
    return running.contains(owner);
  }
  void reclaim(std::uint16_t owner, bool process_gone) override {
    reclaims.emplace_back(owner, process_gone);
  }
  void released(std::uint16_t owner) override { released_slots.push_back(owner); }
};

// A heartbeat table on the heap, as ferryd's shared one is laid out.
struct Table {
  struct alignas(64) Bytes {
    std::byte data[kHeartbeatTableBytes];
  };
  std::unique_ptr<Bytes> bytes = std::make_unique<Bytes>();  // zeroed: every slot free
  HeartbeatTable beats = HeartbeatTable::in(bytes->data, kHeartbeatTableBytes);

  void beat(std::uint16_t owner, std::uint64_t now) const {
    beats.slot(owner)->beat_ms.store(now, std::memory_order_relaxed);
  }
  [[nodiscard]] SlotState word(std::uint16_t owner) const {
    return static_cast<SlotState>(beats.slot(owner)->state.load(std::memory_order_relaxed));
  }
  void set(std::uint16_t owner, SlotState word, pid_t pid) const {
    beats.slot(owner)->state.store(static_cast<std::uint32_t>(word), std::memory_order_relaxed);
    beats.slot(owner)->pid.store(pid, std::memory_order_relaxed);
  }
};

}  // namespace ferry::discovery::test
