#pragma once
// A single-producer/single-consumer ring of fixed-size slots, over memory
// handed to it (a Segment's payload across processes, or a heap buffer
// shared by threads in tests).
//
// - Free-running u32 indices: `tail` written only by the producer, `head` only
//   by the consumer (except in overwrite mode, below), each on its own cache
//   line; a message is published by ONE release store of tail, so a producer
//   that dies mid-write leaves nothing visible. Each handle caches the peer's
//   index and re-reads it only when the ring looks full (producer) or empty
//   (consumer).
// - Capacity, mask and slot size are checked once at attach and kept in the
//   handle; later writes to the shared geometry have no effect. A length read
//   from a slot is read once and checked against the slot and the caller's
//   buffer; a bad value is an error code and a counter, never a crash.
// - Waiting: push()/pop() spin a bounded number of times, then sleep on a
//   doorbell (futex) with the sleeping-flag handshake; every wait has a
//   timeout; no clock read unless about to sleep.
//
// Two protocols, fixed per ring by its geometry's RingMode:
// - Spsc (plain): the consumer alone moves head, the producer alone tail;
//   slots are plain copies. Everything in ring_fast_path.hpp,
//   ring_handles.hpp and below.
// - Overwrite (drop_oldest): the producer never stores head. The consumer
//   claims a slot by CAS on head after copying it out; the producer discards
//   the oldest message by the same CAS; whoever wins owns the slot. Slot
//   words are then accessed through std::atomic_ref (the consumer's copy is
//   speculative and may race with the producer's rewrite). Its code is in
//   ring_overwrite.hpp (producer) and ring_overwrite.cpp (consumer).
// The handles decide between them in a few places only: how a slot is
// written (ProducerFastPath::write_slot), how a message is taken (try_pop,
// ready, try_pop_ready, has_data), and the WrongMode guard of each
// protocol's own operations (consume_many; try_push_overwrite*).
//
// Files: ring_fast_path.hpp holds the handles' inline fast path (all
// <ferry/ferry.hpp> needs), ring_handles.hpp the handles built on it; this
// header adds geometry, formatting, stats, waiting and batches;
// slot_format.hpp says what a slot carries.
//
// Hot path: no heap allocation, no exception, no system call unless the peer
// sleeps or we must sleep.

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <expected>
#include <span>
#include <string_view>

#include "ferry/transport/doorbell.hpp"
#include "ferry/transport/platform.hpp"
#include "ferry/transport/ring_handles.hpp"
#include "ferry/transport/ring_layout.hpp"

namespace ferry::transport {

struct RingGeometry {
  std::uint32_t capacity = 0;   // slots, a power of two
  std::uint32_t slot_size = 0;  // bytes per slot including the 32-byte slot header; multiple of 8
  RingMode mode = RingMode::Spsc;
};

[[nodiscard]] std::string_view to_string(RingError e) noexcept;

// Bytes a ring of this geometry needs (0 when the geometry is invalid).
[[nodiscard]] std::size_t ring_bytes(const RingGeometry& geometry) noexcept;
[[nodiscard]] std::expected<void, RingError> validate_geometry(
    const RingGeometry& geometry) noexcept;

// Initialises a ring in `mem` (64-byte aligned, `bytes` >= ring_bytes). Both
// indices start at `initial_index` (tests start near UINT32_MAX to cross the
// wrap). Not concurrent with anything: publish the memory afterwards (e.g.
// Segment::seal).
[[nodiscard]] std::expected<void, RingError> format_ring(void* mem, std::size_t bytes,
                                                         const RingGeometry& geometry,
                                                         std::uint32_t initial_index = 0) noexcept;

// A snapshot of a ring's counters, for observability (works on a read-only
// mapping; never disturbs the producer or consumer beyond reading their lines).
struct RingStats {
  bool valid = false;  // false: not a ring of this layout (everything else is zero)
  std::uint32_t capacity = 0;
  std::uint32_t slot_size = 0;
  RingMode mode = RingMode::Spsc;
  std::uint32_t head = 0;
  std::uint32_t tail = 0;
  std::uint32_t backlog = 0;  // tail - head as read (not atomic as a pair)
  std::uint64_t pushed = 0;
  std::uint64_t popped = 0;
  std::uint64_t dropped = 0;
  std::uint64_t overwritten = 0;
  std::uint64_t timed_out = 0;
  std::uint64_t corrupt = 0;
  // The most that waited whenever someone looked: the producer (finding the
  // ring full), the consumer (re-reading tail), or this snapshot.
  std::uint32_t max_backlog = 0;
};
inline constexpr std::size_t kRingHeaderBytes = ring_layout::kSlotsOffset;
[[nodiscard]] RingStats read_ring_stats(const void* mem,
                                        std::size_t bytes = kRingHeaderBytes) noexcept;

namespace detail {
// What attach learned from (and checked in) the shared geometry.
struct RingAttachment {
  ring_layout::RingHeader* header = nullptr;
  std::byte* slots = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t mask = 0;
  std::uint32_t slot_size = 0;
  RingMode mode = RingMode::Spsc;
};
[[nodiscard]] std::expected<RingAttachment, RingError> attach_ring(void* mem,
                                                                   std::size_t bytes) noexcept;
}  // namespace detail

// ---------------------------------------------------------------------------
// RingProducer, beyond the fast path.

inline std::expected<void, RingError> RingProducer::push(std::span<const std::byte> msg,
                                                         std::uint32_t flags,
                                                         std::chrono::nanoseconds timeout,
                                                         const std::atomic<bool>* give_up,
                                                         const SlotMeta& meta) noexcept {
  for (std::uint32_t spin = 0;; ++spin) {
    const auto r = try_push(msg, flags, meta);
    // Rebuilt rather than copied: GCC 12 warns that a copy of a valued
    // std::expected<void, E> reads its unset error (-Wmaybe-uninitialized).
    if (r) {
      spin_.paid_off();
      return {};
    }
    if (r.error() != RingError::Full) {
      spin_.paid_off();
      return std::unexpected(r.error());
    }
    if (spin >= spin_.budget()) break;
    spin_wait_step();
  }
  spin_.wasted();
  return push_slow(msg, flags, timeout, give_up, meta);
}

inline std::size_t RingProducer::stage_many(const std::byte* data, std::size_t count,
                                            std::uint32_t size, std::uint32_t flags,
                                            SlotMeta meta) noexcept {
  if (size > payload_max_ || count == 0) return 0;
  std::uint32_t used = next_ - cached_head_;
  if (capacity_ - used < count) {
    // SYNC: acquire, pairs with the consumer's release store (or CAS) of
    // head: its reads of the slots it freed happen before we reuse them.
    cached_head_ = header_->consumer.head.load(std::memory_order_acquire);
    used = next_ - cached_head_;
    if (used > capacity_) return 0;  // corrupt: try_push reports it
    note_backlog(used);
  }
  const std::size_t n = std::min<std::size_t>(count, capacity_ - used);
  // The consumer read these slots last: ask for every line the batch writes
  // at once (PREFETCHW), so that the transfers overlap instead of each store
  // waiting for its own line in turn. 64 B batches of 64: 25 -> 30 M msg/s
  // (docs/design/hot-path.md, Batches).
  const std::size_t written = ring_layout::kSlotHeaderBytes + size;
  for (std::size_t k = 0; k < n; ++k) {
    const std::byte* slot = slot_at(next_ + static_cast<std::uint32_t>(k));
    prefetch_for_write(slot);
    prefetch_for_write(slot + written - 1);
  }
  for (std::size_t k = 0; k < n; ++k) {
    write_slot(next_, std::span(data + k * size, size), flags, meta);
    ++meta.sequence;
    ++next_;
  }
  return n;
}

inline bool RingProducer::has_room() noexcept {
  // SYNC: acquire, pairs with the consumer's release store (or CAS) of head:
  // the slot it freed is no longer read once we reuse it.
  cached_head_ = header_->consumer.head.load(std::memory_order_acquire);
  return next_ - cached_head_ != capacity_;
}

inline void RingProducer::close() noexcept {
  // SYNC: release, pairs with the acquire load in finished(): every
  // message published before is visible to a consumer that sees it.
  header_->producer.closed.store(1, std::memory_order_release);
  doorbell_notify(*data_bell_);
}

inline void RingProducer::notify_space() const noexcept { doorbell_notify(header_->space_bell); }

inline bool RingProducer::reader_left() const noexcept {
  // SYNC: acquire, pairs with the release store in RingConsumer::leave():
  // the consumer's last head store is visible, and nothing follows it.
  return header_->consumer.left.load(std::memory_order_acquire) != 0;
}

inline void RingProducer::count_dropped(std::uint64_t n) noexcept {
  dropped_ += n;
  // SYNC: relaxed; single-writer counter, read by read_ring_stats.
  header_->producer.dropped.store(dropped_, std::memory_order_relaxed);
}

inline void RingProducer::count_timed_out(std::uint64_t n) noexcept {
  timed_out_ += n;
  // SYNC: relaxed; single-writer counter, read by read_ring_stats.
  header_->producer.timed_out.store(timed_out_, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// RingConsumer, beyond the fast path.

inline std::expected<std::uint32_t, RingError> RingConsumer::pop(std::span<std::byte> out,
                                                                 std::uint32_t* flags,
                                                                 std::chrono::nanoseconds timeout,
                                                                 SlotMeta* meta) noexcept {
  for (std::uint32_t spin = 0;; ++spin) {
    auto r = try_pop(out, flags, meta);
    if (r || r.error() != RingError::Empty) {
      spin_.paid_off();
      return r;
    }
    if (spin >= spin_.budget()) break;
    spin_wait_step();
  }
  spin_.wasted();
  return pop_slow(out, flags, timeout, meta);
}

inline void RingConsumer::leave() noexcept {
  // SYNC: release, pairs with the acquire load in RingProducer::reader_left();
  // doorbell_notify's fence orders it before the check of `sleeping`, so a
  // producer asleep for room wakes and sees it.
  header_->consumer.left.store(1, std::memory_order_release);
  doorbell_notify(header_->space_bell);
}

inline bool RingConsumer::finished() const noexcept {
  // SYNC: acquire, pairs with the release store in RingProducer::close():
  // the tail it published before is visible to has_data() below.
  if (header_->producer.closed.load(std::memory_order_acquire) == 0) return false;
  return !has_data();
}

template <class Visit>
std::expected<std::uint32_t, RingError> RingConsumer::consume_many(std::uint32_t max,
                                                                   Visit&& visit) noexcept {
  if (mode_ != RingMode::Spsc) return std::unexpected(RingError::WrongMode);
  const std::uint32_t h = head_;
  if (h == cached_tail_) {
    // SYNC: acquire, pairs with the producer's release store of tail in
    // publish(): the slots before it are fully written.
    const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
    if (t == h) return 0;
    if (t - h > capacity_ || broken_) [[unlikely]] {
      mark_broken();
      return std::unexpected(RingError::CorruptIndices);
    }
    cached_tail_ = t;
    note_backlog(t - h);
  }
  const std::uint32_t n = std::min(cached_tail_ - h, max);
  if (n == 0) return 0;
  std::uint32_t taken = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::byte* slot = slot_at(h + k);
    // Read ONCE, as in next_slot(): the producer may rewrite it.
    const ring_layout::SlotHeader hdr = detail::unpack_header(detail::load_word(slot));
    if (hdr.length > payload_max_) [[unlikely]] {
      count_corrupt();
      continue;
    }
    visit(std::span<const std::byte>(slot + ring_layout::kSlotHeaderBytes, hdr.length), hdr.flags);
    ++taken;
  }
  popped_ += taken;
  // SYNC: relaxed; single-writer counter, read by read_ring_stats.
  header_->consumer.popped.store(popped_, std::memory_order_relaxed);
  head_ = h + n;
  // SYNC: release, pairs with the producer's acquire load of head
  // (ensure_room/has_room/stage_many): our reads of these slots happen
  // before their reuse.
  header_->consumer.head.store(head_, std::memory_order_release);
  doorbell_notify(header_->space_bell);  // its fence orders the head store before `sleeping`
  return n;
}

}  // namespace ferry::transport

#include "ferry/transport/ring_overwrite.hpp"  // IWYU pragma: export
