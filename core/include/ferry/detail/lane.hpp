#pragma once
// The hot path's shortcut ("lane"), compiled into the caller's code: for a
// port with one queue and nothing changing, publish() is one ring push and
// take() one ring pop into a held buffer. The port's user thread keeps the
// lane current whenever it applies a change to its queues (rebuild_lane()
// in publisher_state.cpp and subscriber_state.cpp), and clears it whenever
// the shortcut would not do what the general path does. Why it is inlined,
// and forced (FERRY_HOT), as measured: docs/design/hot-path.md.
//
// Threads: everything here but `changes` (and the node's state word, which
// ferryd writes) belongs to the port's user thread.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "ferry/detail/held_samples.hpp"
#include "ferry/transport/ring_fast_path.hpp"

namespace ferry::detail {

// What a ring slot carries (ferry/transport/ring_fast_path.hpp).
using transport::kSlotInline;
using transport::kSlotPooled;

// Our node's heartbeat slot state once ferryd declared it dead
// (discovery::SlotState::DeclaredDead).
inline constexpr std::uint32_t kNodeDeclaredDead = 2;

// Whether `node_state` (null without a heartbeat table) says so.
[[nodiscard]] FERRY_HOT inline bool node_state_says_dead(
    const std::atomic<std::uint32_t>* node_state) noexcept {
  // SYNC: relaxed; ferryd's store happens before it reclaims anything of
  // ours, and what we do after seeing it depends on no other shared data.
  return node_state != nullptr && node_state->load(std::memory_order_relaxed) == kNodeDeclaredDead;
}

// Whether the port's queues are as the user's thread last applied them.
struct LaneGuard {
  std::atomic<std::uint32_t> changes{0};  // bumped by the runtime thread per change
  std::uint32_t seen = 0;                 // user's thread: `changes` when it last applied them
  // Our node's heartbeat slot state (null: none); only ferryd writes it.
  const std::atomic<std::uint32_t>* node_state = nullptr;

  [[nodiscard]] FERRY_HOT bool changed() const noexcept {
    // SYNC: acquire, pairs with the release fetch_add in
    // PortState::announce_change(): what the runtime thread queued for us
    // (under its mutex) is complete before we go and apply it.
    return changes.load(std::memory_order_acquire) != seen;
  }
  [[nodiscard]] FERRY_HOT bool node_declared_dead() const noexcept {
    return node_state_says_dead(node_state);
  }
  // Nothing to apply: the lanes built from the last change still hold.
  [[nodiscard]] FERRY_HOT bool clear() const noexcept {
    return !changed() && !node_declared_dead();
  }
};

// A publisher's lane (when it is set: docs/design/hot-path.md): a publish
// that fits a slot and finds room is one push; anything else (a longer
// bytes sample, a full queue, a change, a death) goes the general path.
struct PublishLane {
  const LaneGuard* guard = nullptr;
  // The queue's RingProducer, seen as its fast path; null: no shortcut now.
  transport::ProducerFastPath* producer = nullptr;

  // Before try_publish, first thing in publish(): the ring starts fetching
  // the slot's lines while the publisher reads the clock (measured:
  // docs/design/hot-path.md). A hint: no check needed.
  FERRY_HOT void prefetch(std::uint32_t size) const noexcept {
    if (producer != nullptr) producer->prefetch_next_slot(size);
  }
  // True when the sample was pushed; false: nothing happened, take the
  // general path (it repeats the attempt with the policy applied).
  [[nodiscard]] FERRY_HOT bool try_publish(const void* data, std::uint32_t size,
                                           const transport::SlotMeta& meta) const noexcept {
    transport::ProducerFastPath* ring = open();
    return ring != nullptr && ring->try_push(std::span(static_cast<const std::byte*>(data), size),
                                             kSlotInline, meta, transport::Flush::IfAlone)
                                  .has_value();
  }
  // The queue's producer when the shortcut applies now, else null.
  [[nodiscard]] FERRY_HOT transport::ProducerFastPath* open() const noexcept {
    return producer != nullptr && guard->clear() ? producer : nullptr;
  }
};

// One sample the lane took: its bytes in a held buffer.
struct LaneTaken {
  std::byte* data = nullptr;  // the held buffer
  std::uint32_t size = 0;     // bytes popped into it
  std::uint32_t token = 0;    // the buffer's, for HeldSamples::release
  std::uint32_t flags = 0;    // the slot's
};

enum class LaneResult : std::uint8_t {
  Taken,    // `out` holds an inline sample
  Popped,   // `out` holds a slot that is not one (a pooled sample, or a
            // broken peer's): its buffer is held, the port settles it
  Empty,    // nothing queued (the queue's tail says so)
  General,  // the shortcut does not apply now: take the general path
};

// A subscriber's lane (when it is set: docs/design/hot-path.md).
struct TakeLane {
  const LaneGuard* guard = nullptr;
  // The queue's RingConsumer, seen as its fast path; null: no shortcut now.
  transport::ConsumerFastPath* consumer = nullptr;
  HeldSamples* held = nullptr;
  std::uint32_t slot_bytes = 0;  // a held buffer's size: the largest inline payload
  std::uint32_t min_size = 0;    // an inline sample's sizes: a typed topic's one,
  std::uint32_t max_size = 0;    // a bytes topic's 0 to its max_size

  // A slot that is not a plausible inline sample comes back Popped; a failed
  // pop (a corrupt slot, a race lost to an overwriting producer) General.
  [[nodiscard]] FERRY_HOT LaneResult try_take(LaneTaken& out) const noexcept {
    if (consumer == nullptr) return LaneResult::General;
    // The tail before the guard (docs/design/hot-path.md). A change waiting makes an
    // empty lane General, so a queue added meanwhile is still looked at.
    if (!consumer->ready()) return guard->clear() ? LaneResult::Empty : LaneResult::General;
    if (!guard->clear()) return LaneResult::General;
    std::uint32_t token = 0;
    std::byte* buffer = nullptr;
    if (!held->acquire(token, buffer)) return LaneResult::General;  // max_held: it says so
    std::uint32_t size = 0;
    std::uint32_t flags = 0;
    // The metadata goes straight to where the Sample will read it.
    transport::SlotMeta& meta = held->info(token);
    if (!consumer->try_pop_ready(std::span(buffer, slot_bytes), size, flags, meta)) [[unlikely]] {
      // Not the plain case (a corrupt slot, an overwriting producer's ring):
      // the ring's full pop decides.
      const auto popped = consumer->try_pop_general(std::span(buffer, slot_bytes), &flags, &meta);
      if (!popped) {
        held->unacquire(token);
        return LaneResult::General;
      }
      size = *popped;
    }
    out = LaneTaken{buffer, size, token, flags};
    if (flags == kSlotInline && size >= min_size && size <= max_size) [[likely]]
      return LaneResult::Taken;
    return LaneResult::Popped;
  }
};

}  // namespace ferry::detail
