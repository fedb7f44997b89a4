#pragma once
// The overwrite protocol (RingMode::Overwrite, the drop_oldest policy),
// producer side: pushes that discard the oldest message when the ring is
// full. Its consumer side is RingConsumer::try_pop_overwrite
// (ring_overwrite.cpp); the protocol and why a successful CAS means an untorn
// copy are described there and at the top of ring.hpp. Included by ring.hpp.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>

#include "ferry/transport/ring_handles.hpp"
#include "ferry/transport/ring_layout.hpp"

namespace ferry::transport {

// Overwrite-mode try_pop gives up (Contended) after this many lost races.
inline constexpr std::uint32_t kMaxClaimRetries = 1024;

template <class OnDiscard>
std::expected<PushOutcome, RingError> RingProducer::try_push_overwrite(
    std::span<const std::byte> msg, std::uint32_t flags, OnDiscard&& on_discard,
    const SlotMeta& meta) noexcept {
  if (mode_ != RingMode::Overwrite) return std::unexpected(RingError::WrongMode);
  if (msg.size() > payload_max_) return std::unexpected(RingError::TooLarge);
  publish();  // nothing may stay staged: the discard below assumes next_ == tail_
  PushOutcome outcome = PushOutcome::Appended;
  const std::uint32_t t = next_;
  if (t - cached_head_ >= capacity_) {
    // SYNC: acquire, pairs with the consumer's acq_rel CAS of head: its copy
    // of the slot it took happens before we reuse that slot.
    std::uint32_t h = header_->consumer.head.load(std::memory_order_acquire);
    std::uint32_t used = t - h;
    if (used > capacity_) return std::unexpected(RingError::CorruptIndices);
    note_backlog(used);
    if (used == capacity_) {
      // Full: discard the oldest (index h) by the same CAS the consumer uses
      // to take it. Whoever wins owns the slot.
      // SYNC: acq_rel on success (the slot is ours; pairs with the consumer's
      // failed CAS / acquire loads of head); acquire on failure, pairs with
      // the consumer's successful acq_rel CAS: its copy happened before our
      // rewrite of that slot, so a consumer whose CAS succeeded read an
      // untorn message.
      if (header_->consumer.head.compare_exchange_strong(h, h + 1, std::memory_order_acq_rel,
                                                         std::memory_order_acquire)) {
        // SYNC: release fence, pairs with the acquire fence in
        // RingConsumer::try_pop_overwrite before it re-reads head: if the
        // consumer's peek read any word we store below, it sees head moved.
        std::atomic_thread_fence(std::memory_order_release);
        const std::byte* slot = slot_at(h);
        // Our own earlier writes: no race (the consumer only reads slots).
        const ring_layout::SlotHeader old = detail::unpack_header(detail::load_word(slot));
        const std::size_t old_length = old.length <= payload_max_ ? old.length : 0;
        on_discard(std::span<const std::byte>(slot + ring_layout::kSlotHeaderBytes, old_length),
                   old.flags);
        ++overwritten_;
        // SYNC: relaxed; single-writer counter, read by read_ring_stats.
        header_->producer.overwritten.store(overwritten_, std::memory_order_relaxed);
        cached_head_ = h + 1;
        outcome = PushOutcome::Overwrote;
      } else {
        // The consumer took the oldest first (h now holds the new head): room.
        if (t - h >= capacity_) return std::unexpected(RingError::CorruptIndices);
        cached_head_ = h;
      }
    } else {
      cached_head_ = h;
    }
  }
  write_slot(t, msg, flags, meta);
  ++next_;
  publish();
  return outcome;
}

template <class OnDiscard>
std::expected<std::size_t, RingError> RingProducer::try_push_overwrite_many(
    const std::byte* data, std::size_t count, std::uint32_t size, std::uint32_t flags,
    SlotMeta meta, OnDiscard&& on_discard) noexcept {
  if (mode_ != RingMode::Overwrite) return std::unexpected(RingError::WrongMode);
  if (size > payload_max_) return std::unexpected(RingError::TooLarge);
  if (count == 0) return 0;
  publish();  // nothing may stay staged: the discard below assumes next_ == tail_
  const std::size_t skipped = count > capacity_ ? count - capacity_ : 0;
  const auto written = static_cast<std::uint32_t>(count - skipped);
  const std::uint32_t t = next_;
  std::uint32_t discarded = 0;
  if (t - cached_head_ > capacity_ - written) {
    // SYNC: acquire, pairs with the consumer's acq_rel CAS of head: its copy
    // of the slots it took happens before we reuse them.
    std::uint32_t h = header_->consumer.head.load(std::memory_order_acquire);
    while (true) {
      const std::uint32_t used = t - h;
      if (used > capacity_) return std::unexpected(RingError::CorruptIndices);
      note_backlog(used);
      if (used <= capacity_ - written) {
        cached_head_ = h;  // the consumer made room meanwhile
        break;
      }
      const std::uint32_t need = used - (capacity_ - written);
      // Discard the `need` oldest at once, by the CAS the consumer uses to
      // take one. SYNC: acq_rel on success (the slots are ours; pairs with
      // the consumer's failed CAS / acquire loads of head); acquire on
      // failure, pairs with the consumer's successful acq_rel CAS: its copy
      // happened before our rewrite (as in try_push_overwrite).
      if (header_->consumer.head.compare_exchange_strong(h, h + need, std::memory_order_acq_rel,
                                                         std::memory_order_acquire)) {
        // SYNC: release fence, pairs with the acquire fence in
        // RingConsumer::try_pop_overwrite before it re-reads head.
        std::atomic_thread_fence(std::memory_order_release);
        for (std::uint32_t k = 0; k < need; ++k) {
          const std::byte* slot = slot_at(h + k);
          // Our own earlier writes: no race (the consumer only reads slots).
          const ring_layout::SlotHeader old = detail::unpack_header(detail::load_word(slot));
          const std::size_t old_length = old.length <= payload_max_ ? old.length : 0;
          on_discard(std::span<const std::byte>(slot + ring_layout::kSlotHeaderBytes, old_length),
                     old.flags);
        }
        discarded = need;
        cached_head_ = h + need;
        break;
      }
      // The consumer took some first (h holds the new head): look again.
    }
  }
  meta.sequence += skipped;
  for (std::uint32_t k = 0; k < written; ++k) {
    write_slot(next_, std::span(data + (skipped + k) * size, size), flags, meta);
    ++meta.sequence;
    ++next_;
  }
  const std::size_t overwritten = discarded + skipped;
  if (overwritten != 0) {
    overwritten_ += overwritten;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->producer.overwritten.store(overwritten_, std::memory_order_relaxed);
  }
  publish();
  return overwritten;
}

}  // namespace ferry::transport
