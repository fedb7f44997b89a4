#pragma once
// The topic's full-queue policy, in one place, for every publish that the
// lane (ferry/detail/lane.hpp) does not take: a single publish() is a batch
// of one, publish_many() a batch of N, a pooled sample a batch of one whose
// slot carries a chunk reference. Adding a policy means adding it here.
//
//   policy       a full queue                      observers
//   drop_new     the samples that do not fit are   always overwrite (their
//                refused (dropped)                 outcome is not the
//   drop_oldest  the oldest queued go (overwritten) publisher's result)
//   block        wait for room until block_timeout_ms,
//                then what is left is timed_out
//
// No allocation, lock or system call unless a subscriber sleeps (its
// doorbell) or block must wait (the queue's space doorbell).
#include <cstddef>
#include <cstdint>

#include "ferry/publish_result.hpp"
#include "ferry/transport/pool.hpp"
#include "ferry/transport/slot_format.hpp"

namespace ferry::detail {

class PublisherState;

// What one delivery sends: `count` slot payloads of `size` bytes, back to
// back at `data`; `info` is the first one's (sequence + k for the k-th, the
// rest shared by the batch).
struct Outgoing {
  const std::byte* data = nullptr;
  std::size_t count = 0;
  std::uint32_t size = 0;
  std::uint32_t flags = transport::kSlotInline;  // or kSlotPooled: count 1, a PooledSlot
  transport::SlotMeta info{};
  // Pooled only: the chunk whose references move with the sample.
  transport::ChunkRef chunk{};
  // Pooled and no history: when the port has exactly one queue, the
  // publisher's own reference is handed to its subscriber (Pool::transfer,
  // one CAS) instead of a give now and a release after the push. Null:
  // never; else set true once it happened.
  bool* handed = nullptr;

  // The samples from the k-th on.
  [[nodiscard]] Outgoing from(std::size_t k) const noexcept {
    Outgoing rest = *this;
    rest.data += k * size;
    rest.count -= k;
    rest.info.sequence += k;
    return rest;
  }
};

// Sends `out` to every queue of the port by the topic's policy (observers
// last) and keeps inline samples in the topic's history. A port ferryd
// declared dead sends nothing: the result's error says so.
PublishResult deliver(PublisherState& state, const Outgoing& out) noexcept;

// PublishResult's counts added up (publish_many of pooled samples).
void add_result(PublishResult& into, const PublishResult& r) noexcept;

}  // namespace ferry::detail
