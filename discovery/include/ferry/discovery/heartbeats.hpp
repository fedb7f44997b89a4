#pragma once
// The domain's heartbeat table: a Segment of kind Registry named
// "ferry.<domain>.registry", made by ferryd. One 16-byte slot per node,
// indexed by the node's Welcome::node_slot (its pool owner id), plus
// ferryd's own beat in the header.
//
// Who writes what: a node's runtime thread stores its slot's `beat_ms`
// every heartbeat_ms; ferryd writes `state` and `pid` (at Hello, at death)
// and its own beat. Every word is a lock-free atomic (address-free, so it
// works across processes). Nobody trusts a value it did not write: ferryd
// reads a node's beat as a number and saturates ages; a node reads only its
// own slot's state.

#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/transport/names.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::discovery {

inline constexpr transport::SegmentKind kRegistryKind = transport::SegmentKind::Registry;
inline constexpr std::uint32_t kRegistryLayoutVersion = 1;
inline constexpr std::uint32_t kHeartbeatSlots = 65536;  // owner ids are u16

[[nodiscard]] inline std::string registry_object_name(std::string_view domain) {
  return transport::shm_name(domain, "registry");
}

// What ferryd says about a slot.
// A dead node's slot stays declared_dead or reclaiming until ferryd has
// reclaimed all it held and its process is gone: a ferryd that starts finds
// there every reclaim its predecessor left unfinished (node_reaper.hpp).
enum class SlotState : std::uint32_t {
  Free = 0,  // unused, or a dead node's, reclaimed for good
  Alive = 1,
  DeclaredDead = 2,  // no heartbeat for timeout_ms: its ports are gone
  Reclaiming = 3,    // its socket closed: dead, reclaim not finished yet
};

struct HeartbeatSlot {
  std::atomic<std::uint64_t> beat_ms;  // the node's last beat, monotonic_ms()
  std::atomic<std::uint32_t> state;    // SlotState, written by ferryd
  std::atomic<std::int32_t> pid;       // written by ferryd
};
// A restarted ferryd adopts the table its predecessor left (and nodes built
// from another ferry version may map it): the layout is fixed here.
static_assert(sizeof(HeartbeatSlot) == 16);
static_assert(alignof(HeartbeatSlot) == 8);
static_assert(offsetof(HeartbeatSlot, beat_ms) == 0);
static_assert(offsetof(HeartbeatSlot, state) == 8);
static_assert(offsetof(HeartbeatSlot, pid) == 12);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::int32_t>::is_always_lock_free);

struct alignas(64) HeartbeatHeader {
  std::atomic<std::uint64_t> daemon_beat_ms;  // ferryd's own beat
  std::atomic<std::int32_t> daemon_pid;
  std::uint32_t heartbeat_ms;
  std::uint32_t timeout_ms;
  std::uint32_t slot_count;
  // What a restarted ferryd continues from (ferryd writes): port ids and ring
  // names are never reused; owner ids past next_owner are fresh.
  std::atomic<std::uint32_t> next_owner;
  std::atomic<std::uint64_t> next_id;
};
static_assert(sizeof(HeartbeatHeader) == 64);
static_assert(alignof(HeartbeatHeader) == 64);
static_assert(offsetof(HeartbeatHeader, daemon_beat_ms) == 0);
static_assert(offsetof(HeartbeatHeader, daemon_pid) == 8);
static_assert(offsetof(HeartbeatHeader, heartbeat_ms) == 12);
static_assert(offsetof(HeartbeatHeader, timeout_ms) == 16);
static_assert(offsetof(HeartbeatHeader, slot_count) == 20);
static_assert(offsetof(HeartbeatHeader, next_owner) == 24);
static_assert(offsetof(HeartbeatHeader, next_id) == 32);

inline constexpr std::size_t kHeartbeatTableBytes =
    sizeof(HeartbeatHeader) + std::size_t{kHeartbeatSlots} * sizeof(HeartbeatSlot);

// One clock for every process of the machine (CLOCK_MONOTONIC), in ms.
[[nodiscard]] inline std::uint64_t monotonic_ms() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}

// A view of the table in a mapped Registry segment's payload.
class HeartbeatTable {
 public:
  HeartbeatTable() = default;
  // Null when the payload is too small to be a table.
  [[nodiscard]] static HeartbeatTable in(std::byte* payload, std::size_t size) noexcept {
    HeartbeatTable t;
    if (payload != nullptr && size >= kHeartbeatTableBytes) t.base_ = payload;
    return t;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return base_ != nullptr; }
  [[nodiscard]] HeartbeatHeader& header() const noexcept {
    return *reinterpret_cast<HeartbeatHeader*>(base_);
  }
  // Null for an index out of range (a slot number is untrusted input).
  [[nodiscard]] HeartbeatSlot* slot(std::uint32_t index) const noexcept {
    if (base_ == nullptr || index >= kHeartbeatSlots) return nullptr;
    return reinterpret_cast<HeartbeatSlot*>(base_ + sizeof(HeartbeatHeader)) + index;
  }

 private:
  std::byte* base_ = nullptr;
};

}  // namespace ferry::discovery
