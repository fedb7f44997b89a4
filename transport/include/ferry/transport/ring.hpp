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
// - Overwrite mode (drop_oldest): the producer never stores head. The
//   consumer claims a slot by CAS on head after copying it out; the producer
//   discards the oldest message by the same CAS; whoever wins owns the slot.
//   Slot words are then accessed through std::atomic_ref (the consumer's copy
//   is speculative and may race with the producer's rewrite).
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
#include "ferry/transport/ring_layout.hpp"

namespace ferry::transport {

struct RingGeometry {
  std::uint32_t capacity = 0;   // slots, a power of two
  std::uint32_t slot_size = 0;  // bytes per slot including the 32-byte slot header; multiple of 8
  RingMode mode = RingMode::Spsc;
};

enum class RingError : std::uint8_t {
  Full,             // no free slot (try_push, stage, claim)
  Empty,            // nothing to take (try_pop, front)
  TooLarge,         // message longer than the slot payload (max_message_size())
  BufferTooSmall,   // the caller's buffer is shorter than the message; it stays in the ring
  CorruptSlot,      // a slot's length exceeds the slot: skipped and counted
  CorruptIndices,   // tail - head > capacity: the peer (or the memory) is broken
  Timeout,          // push()/pop() deadline passed
  InvalidGeometry,  // format: capacity not a power of two, bad slot size, bad mode
  BadLayout,        // attach: not a ring of this layout version, or bad geometry
  TooSmall,         // the memory region is smaller than the ring needs
  Misaligned,       // the memory region is not 64-byte aligned
  WrongMode,        // operation not available in this ring's mode
  Contended,        // overwrite mode: the producer discarded every message we tried to take
  Abandoned,        // push(): the caller's give-up flag was raised (the consumer is gone)
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

// Spin iterations (each one try + spin_wait_step(), ~150 ns) before
// push()/pop() go to sleep: ~15 us, many cross-core round trips (~0.5 us).
inline constexpr std::uint32_t kDefaultSpinLimit = 100;
// Overwrite-mode try_pop gives up (Contended) after this many lost races.
inline constexpr std::uint32_t kMaxClaimRetries = 1024;

enum class PushOutcome : std::uint8_t {
  Appended,   // there was room
  Overwrote,  // the oldest message was discarded to make room
};

// A message seen in place (RingConsumer::front): valid until pop_front().
struct SlotView {
  std::span<const std::byte> payload;
  std::uint32_t flags = 0;
  SlotMeta meta{};
};

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

inline std::uint64_t load_word(const std::byte* p) noexcept {
  // atomic_ref needs a non-const object; this is a load only.
  // SYNC: relaxed; ordering comes from the index acquire/CAS around the caller.
  return std::atomic_ref<std::uint64_t>(
             *reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_relaxed);
}
inline void store_word(std::byte* p, std::uint64_t v) noexcept {
  // SYNC: relaxed; published by the producer's release store of tail.
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .store(v, std::memory_order_relaxed);
}
inline std::uint64_t pack_header(std::uint32_t length, std::uint32_t flags) noexcept {
  const ring_layout::SlotHeader h{length, flags};
  std::uint64_t w = 0;
  std::memcpy(&w, &h, sizeof w);
  return w;
}
inline ring_layout::SlotHeader unpack_header(std::uint64_t w) noexcept {
  ring_layout::SlotHeader h{};
  std::memcpy(&h, &w, sizeof h);
  return h;
}
// A slot's SlotMeta, word by word (overwrite mode: the producer may be
// rewriting it; a torn copy is thrown away with the rest of the message).
inline SlotMeta load_meta(const std::byte* slot) noexcept {
  const std::byte* m = slot + ring_layout::kSlotMetaOffset;
  return SlotMeta{load_word(m), load_word(m + 8), load_word(m + 16)};
}
inline void store_meta(std::byte* slot, const SlotMeta& meta) noexcept {
  std::byte* m = slot + ring_layout::kSlotMetaOffset;
  store_word(m, meta.sequence);
  store_word(m + 8, meta.publisher_id);
  store_word(m + 16, meta.publish_time_ns);
}

// How long push()/pop() spin before they sleep, adapted per handle: the
// budget halves each time spinning did not pay off (we slept anyway: the peer
// is slow, or shares our CPU and our spinning only delays it) and grows back
// by a sixteenth of the limit with every push()/pop() that succeeded without
// sleeping. A budget shorter than the peer's answer never succeeds, so it
// would never grow back: every 32nd time spinning fails, the next wait
// probes with the full limit again. On the 2-vCPU test machine, loaded by other work, 2 M messages
// between two processes through a capacity-2 ring took 10-30 s with a fixed
// budget and 1-11 s with this one; with a responsive peer the budget stays at
// the limit, so latency is unchanged.
class SpinBudget {
 public:
  [[nodiscard]] std::uint32_t budget() const noexcept { return budget_; }
  [[nodiscard]] std::uint32_t limit() const noexcept { return limit_; }
  void set_limit(std::uint32_t limit) noexcept {
    limit_ = limit;
    budget_ = limit;
  }
  void paid_off() noexcept { budget_ = std::min(limit_, budget_ + limit_ / 16 + 1); }
  void wasted() noexcept { budget_ = (++misses_ % 32 == 0) ? limit_ : budget_ / 2; }

 private:
  std::uint32_t limit_ = kDefaultSpinLimit;
  std::uint32_t budget_ = kDefaultSpinLimit;
  std::uint32_t misses_ = 0;
};
}  // namespace detail

// ---------------------------------------------------------------------------
// The producer side. One per ring at a time (the caller guarantees it).
class RingProducer {
 public:
  // Checks the ring in `mem` once (magic, version, power-of-two capacity,
  // mask, slot size, size, indices) and continues from its stored tail.
  // Clears a stale `sleeping` flag on the space doorbell (its own side). With
  // `data_doorbell`, notifications go there instead of the ring's own data
  // doorbell (the consumer must wait on the same one).
  [[nodiscard]] static std::expected<RingProducer, RingError> attach(
      void* mem, std::size_t bytes, DoorbellWord* data_doorbell = nullptr) noexcept;

  RingProducer(RingProducer&&) noexcept = default;
  RingProducer& operator=(RingProducer&&) noexcept = default;
  RingProducer(const RingProducer&) = delete;
  RingProducer& operator=(const RingProducer&) = delete;
  ~RingProducer() = default;

  // Publishes one message (copies it into the next slot) or fails with Full,
  // TooLarge or CorruptIndices. Also publishes anything stage()d before. Full
  // is not counted: call count_dropped() when the policy gives the message up.
  [[nodiscard]] std::expected<void, RingError> try_push(std::span<const std::byte> msg,
                                                        std::uint32_t flags = 0,
                                                        const SlotMeta& meta = {}) noexcept {
    auto staged = stage(msg, flags, meta);
    publish();
    return staged;
  }

  // try_push for a hot path that must stay inline (no std::expected to
  // carry): true when the message was published; false, with nothing
  // written, when it is too large, there is no room, or the indices are
  // corrupt. try_push then says which.
  [[nodiscard]] FERRY_HOT bool try_push_fast(std::span<const std::byte> msg, std::uint32_t flags,
                                             const SlotMeta& meta) noexcept {
    if (msg.size() > payload_max_) [[unlikely]]
      return false;
    if (next_ - cached_head_ >= capacity_ && !ensure_room()) return false;
    claimed_ = false;  // as stage(): a pending claim() shares this slot
    write_slot(next_, msg, flags, meta);
    ++next_;
    publish();
    return true;
  }

  // Like try_push, but waits for room: spins (at most spin_limit() iterations,
  // fewer while spinning keeps failing, see detail::SpinBudget), then
  // sleeps on the space doorbell, at most `timeout` from the moment it first
  // decides to sleep (so it never returns Timeout early). A Timeout is
  // counted in timed_out.
  //
  // `give_up` (optional): another thread raises it, then calls
  // notify_space(), to end a wait whose consumer is gone (Abandoned).
  [[nodiscard]] std::expected<void, RingError> push(std::span<const std::byte> msg,
                                                    std::uint32_t flags,
                                                    std::chrono::nanoseconds timeout,
                                                    const std::atomic<bool>* give_up = nullptr,
                                                    const SlotMeta& meta = {}) noexcept {
    for (std::uint32_t spin = 0;; ++spin) {
      auto r = try_push(msg, flags, meta);
      if (r || r.error() != RingError::Full) {
        spin_.paid_off();
        return r;
      }
      if (spin >= spin_.budget()) break;
      spin_wait_step();
    }
    spin_.wasted();
    return push_slow(msg, flags, timeout, give_up, meta);
  }

  // Overwrite mode only: publishes `msg`; when the ring is full, first
  // discards the oldest message (CAS on head) and, if that CAS won, calls
  // on_discard(std::span<const std::byte> payload, std::uint32_t flags) with
  // it before its slot is reused (an unreadable length gives an empty span).
  // If the consumer took that message first, there is room and nothing is
  // discarded.
  template <class OnDiscard>
  [[nodiscard]] std::expected<PushOutcome, RingError> try_push_overwrite(
      std::span<const std::byte> msg, std::uint32_t flags, OnDiscard&& on_discard,
      const SlotMeta& meta = {}) noexcept;

  // Batch: stage() writes messages into free slots without publishing them;
  // publish() makes all staged ones visible with ONE tail store and at most
  // one notification. Returns how many it published.
  [[nodiscard]] std::expected<void, RingError> stage(std::span<const std::byte> msg,
                                                     std::uint32_t flags = 0,
                                                     const SlotMeta& meta = {}) noexcept {
    if (msg.size() > payload_max_) return std::unexpected(RingError::TooLarge);
    if (auto room = ensure_room(); !room) return room;
    claimed_ = false;  // a pending claim() shares this slot: it is abandoned
    write_slot(next_, msg, flags, meta);
    ++next_;
    return {};
  }
  FERRY_HOT std::uint32_t publish() noexcept {
    const std::uint32_t n = next_ - tail_;
    if (n == 0) return 0;
    tail_ = next_;
    // SYNC: release, pairs with the acquire loads of tail in RingConsumer
    // (try_pop, front, has_data): the slots written before are visible.
    header_->producer.tail.store(tail_, std::memory_order_release);
    pushed_ += n;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->producer.pushed.store(pushed_, std::memory_order_relaxed);
    doorbell_notify(*data_bell_);  // the fence in there orders the tail store before `sleeping`
    return n;
  }
  // Batch of samples of one size (`count` of `size` bytes each, back to
  // back at `data`): stages as many as there is room for, in order, the
  // k-th with meta.sequence + k (the rest of `meta` is the batch's). Re-reads
  // head at most once. publish() then sends them with one tail store.
  // Returns how many it staged: 0 when full, too large or corrupt.
  [[nodiscard]] FERRY_HOT std::size_t stage_many(const std::byte* data, std::size_t count,
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
    claimed_ = false;  // as stage(): a pending claim() shares these slots
    for (std::size_t k = 0; k < n; ++k) {
      write_slot(next_, std::span(data + k * size, size), flags, meta);
      ++meta.sequence;
      ++next_;
    }
    return n;
  }

  // Overwrite mode, batch (samples as stage_many's): publishes them with
  // ONE tail store, keeping the newest `capacity`, as `count` calls of
  // try_push_overwrite would leave the ring: the oldest queued messages
  // that must go are discarded with one CAS of head (on_discard for each,
  // as try_push_overwrite), and when count > capacity the batch's first
  // count - capacity samples are never written (each would have been
  // overwritten by a later one of the same batch). Returns how many
  // messages were overwritten in that per-sample sense (discarded plus
  // skipped); the ring's overwritten counter counts the same.
  template <class OnDiscard>
  [[nodiscard]] std::expected<std::size_t, RingError> try_push_overwrite_many(
      const std::byte* data, std::size_t count, std::uint32_t size, std::uint32_t flags,
      SlotMeta meta, OnDiscard&& on_discard) noexcept;

  // Waits until a push would find room: spins (as push()), then sleeps on
  // the space doorbell, at most `timeout` from the moment it decides to
  // sleep. Timeout is not counted (the caller knows how many messages it
  // gives up); Abandoned when `give_up` is raised; CorruptIndices.
  [[nodiscard]] std::expected<void, RingError> wait_room(
      std::chrono::nanoseconds timeout, const std::atomic<bool>* give_up = nullptr) noexcept;

  // stage()s as many of `msgs` as fit, in order (stopping at the first that
  // is full or too large), then publish(). Returns how many were pushed; an
  // error only when none was.
  [[nodiscard]] std::expected<std::size_t, RingError> try_push_batch(
      std::span<const std::span<const std::byte>> msgs, std::uint32_t flags = 0) noexcept {
    std::size_t n = 0;
    RingError first_error = RingError::Full;
    for (const auto& m : msgs) {
      auto r = stage(m, flags);
      if (!r) {
        first_error = r.error();
        break;
      }
      ++n;
    }
    publish();
    if (n == 0 && !msgs.empty()) return std::unexpected(first_error);
    return n;
  }

  // In place (Spsc mode): claim(length) returns the next slot's payload
  // (`length` bytes) to fill; commit() publishes it (and anything staged).
  // Any other push before commit() abandons the claim.
  [[nodiscard]] std::expected<std::span<std::byte>, RingError> claim(
      std::uint32_t length) noexcept {
    if (mode_ != RingMode::Spsc) return std::unexpected(RingError::WrongMode);
    if (length > payload_max_) return std::unexpected(RingError::TooLarge);
    if (auto room = ensure_room(); !room) return std::unexpected(room.error());
    claimed_ = true;
    claimed_length_ = length;
    return std::span<std::byte>(slot_at(next_) + ring_layout::kSlotHeaderBytes, length);
  }
  void commit(std::uint32_t flags = 0) noexcept { commit(flags, claimed_length_); }
  // Commits only the first `length` bytes of the claim (length <= claimed).
  void commit(std::uint32_t flags, std::uint32_t length, const SlotMeta& meta = {}) noexcept {
    if (!claimed_) return;
    claimed_ = false;
    const ring_layout::SlotHeader h{std::min(length, claimed_length_), flags};
    std::memcpy(slot_at(next_), &h, sizeof h);
    std::memcpy(slot_at(next_) + ring_layout::kSlotMetaOffset, &meta, sizeof meta);
    ++next_;
    publish();
  }

  // Policy outcomes decided by the caller (drop_new, block deadline).
  // The producer's last word: no message follows (RingConsumer::finished()).
  void close() noexcept {
    // SYNC: release, pairs with the acquire load in finished(): every
    // message published before is visible to a consumer that sees it.
    header_->producer.closed.store(1, std::memory_order_release);
    doorbell_notify(*data_bell_);
  }

  // Any thread: wakes a push() asleep for room (see its give_up). The
  // header pointer is fixed at attach, so this reads nothing the owner writes.
  void notify_space() const noexcept { doorbell_notify(header_->space_bell); }

  void count_dropped(std::uint64_t n = 1) noexcept {
    dropped_ += n;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->producer.dropped.store(dropped_, std::memory_order_relaxed);
  }
  void count_timed_out(std::uint64_t n = 1) noexcept {
    timed_out_ += n;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->producer.timed_out.store(timed_out_, std::memory_order_relaxed);
  }

  // Re-reads head: true when a push would find room (or the indices are
  // corrupt, so that a waiter stops waiting and sees the error).
  [[nodiscard]] bool has_room() noexcept {
    // SYNC: acquire, pairs with the consumer's release store (or CAS) of head:
    // the slot it freed is no longer read once we reuse it.
    cached_head_ = header_->consumer.head.load(std::memory_order_acquire);
    return next_ - cached_head_ != capacity_;
  }

  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint32_t max_message_size() const noexcept { return payload_max_; }
  [[nodiscard]] RingMode mode() const noexcept { return mode_; }
  [[nodiscard]] std::uint32_t staged() const noexcept { return next_ - tail_; }
  [[nodiscard]] std::uint32_t spin_limit() const noexcept { return spin_.limit(); }
  // 0: push() sleeps as soon as the ring is full.
  void set_spin_limit(std::uint32_t iterations) noexcept { spin_.set_limit(iterations); }

 private:
  RingProducer() = default;

  [[nodiscard]] std::byte* slot_at(std::uint32_t index) const noexcept {
    return slots_ + static_cast<std::size_t>(index & mask_) * slot_size_;
  }

  // Room for one more message at next_? Re-reads head only when the cached
  // value says full.
  [[nodiscard]] std::expected<void, RingError> ensure_room() noexcept {
    if (next_ - cached_head_ < capacity_) return {};
    // SYNC: acquire, pairs with the consumer's release store (or CAS) of head:
    // its reads of the slots it freed happen before we overwrite them.
    cached_head_ = header_->consumer.head.load(std::memory_order_acquire);
    const std::uint32_t used = next_ - cached_head_;
    if (used > capacity_) return std::unexpected(RingError::CorruptIndices);
    note_backlog(used);
    if (used == capacity_) return std::unexpected(RingError::Full);
    return {};
  }

  // max_backlog is sampled when head is re-read, so it is exact at those
  // moments and never over-estimated (staged messages count as backlog).
  void note_backlog(std::uint32_t used) noexcept {
    if (used <= max_backlog_) return;
    max_backlog_ = used;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->producer.max_backlog.store(used, std::memory_order_relaxed);
  }

  FERRY_HOT void write_slot(std::uint32_t index, std::span<const std::byte> msg,
                            std::uint32_t flags, const SlotMeta& meta) noexcept {
    std::byte* slot = slot_at(index);
    const auto length = static_cast<std::uint32_t>(msg.size());
    if (mode_ == RingMode::Spsc) {
      // Plain copies: the consumer reads this slot only after our release
      // store of tail, and we reuse it only after its release store of head.
      const ring_layout::SlotHeader h{length, flags};
      std::memcpy(slot, &h, sizeof h);
      std::memcpy(slot + ring_layout::kSlotMetaOffset, &meta, sizeof meta);
      if (length != 0) std::memcpy(slot + ring_layout::kSlotHeaderBytes, msg.data(), length);
      return;
    }
    // Overwrite mode: a consumer may still be copying this slot speculatively
    // (its CAS will fail): word-sized atomic stores, so there is no data race.
    detail::store_word(slot, detail::pack_header(length, flags));
    detail::store_meta(slot, meta);
    std::byte* payload = slot + ring_layout::kSlotHeaderBytes;
    std::size_t off = 0;
    for (; off + 8 <= length; off += 8) {
      std::uint64_t w;
      std::memcpy(&w, msg.data() + off, 8);
      detail::store_word(payload + off, w);
    }
    if (off < length) {
      std::uint64_t w = 0;
      std::memcpy(&w, msg.data() + off, length - off);
      detail::store_word(payload + off, w);
    }
  }

  [[nodiscard]] std::expected<void, RingError> push_slow(std::span<const std::byte> msg,
                                                         std::uint32_t flags,
                                                         std::chrono::nanoseconds timeout,
                                                         const std::atomic<bool>* give_up,
                                                         const SlotMeta& meta) noexcept;

  ring_layout::RingHeader* header_ = nullptr;
  std::byte* slots_ = nullptr;
  DoorbellWord* data_bell_ = nullptr;
  // Geometry, checked once at attach; never re-read from shared memory.
  std::uint32_t capacity_ = 0;
  std::uint32_t mask_ = 0;
  std::uint32_t slot_size_ = 0;
  std::uint32_t payload_max_ = 0;
  RingMode mode_ = RingMode::Spsc;
  detail::SpinBudget spin_;
  // Private indices: published tail, next slot to write, cached head.
  std::uint32_t tail_ = 0;
  std::uint32_t next_ = 0;
  std::uint32_t cached_head_ = 0;
  bool claimed_ = false;
  std::uint32_t claimed_length_ = 0;
  // Shadows of the single-writer counters (stored, never read back).
  std::uint64_t pushed_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t overwritten_ = 0;
  std::uint64_t timed_out_ = 0;
  std::uint32_t max_backlog_ = 0;
};

// ---------------------------------------------------------------------------
// The consumer side. One per ring at a time (the caller guarantees it).
class RingConsumer {
 public:
  // Checks the ring once and continues from its stored head. Clears a stale
  // `sleeping` flag on the ring's own data doorbell (a consumer killed in
  // futex_wait leaves it set). With `data_doorbell` (shared by all of this
  // consumer's rings), pop() sleeps there; its owner resets its flag.
  [[nodiscard]] static std::expected<RingConsumer, RingError> attach(
      void* mem, std::size_t bytes, DoorbellWord* data_doorbell = nullptr) noexcept;

  RingConsumer(RingConsumer&&) noexcept = default;
  RingConsumer& operator=(RingConsumer&&) noexcept = default;
  RingConsumer(const RingConsumer&) = delete;
  RingConsumer& operator=(const RingConsumer&) = delete;
  ~RingConsumer() = default;

  // Copies the oldest message into `out` and returns its length (flags in
  // *flags). Empty; BufferTooSmall (the message stays); CorruptSlot (its
  // length was impossible: skipped and counted, the next call goes on);
  // CorruptIndices; Contended (overwrite mode, see kMaxClaimRetries). On an
  // error `out` may have been written to.
  [[nodiscard]] std::expected<std::uint32_t, RingError> try_pop(std::span<std::byte> out,
                                                                std::uint32_t* flags = nullptr,
                                                                SlotMeta* meta = nullptr) noexcept {
    if (mode_ == RingMode::Overwrite) return try_pop_overwrite(out, flags, meta);
    front_valid_ = false;  // a front() view is gone once we take the message ourselves
    auto slot = next_slot();
    if (!slot) return std::unexpected(slot.error());
    const ring_layout::SlotHeader h = *slot;
    if (h.length > out.size()) return std::unexpected(RingError::BufferTooSmall);
    if (h.length != 0)
      std::memcpy(out.data(), slot_at(head_) + ring_layout::kSlotHeaderBytes, h.length);
    if (flags != nullptr) *flags = h.flags;
    if (meta != nullptr)
      std::memcpy(meta, slot_at(head_) + ring_layout::kSlotMetaOffset, sizeof *meta);
    release_slot();
    return h.length;
  }

  // The short way after ready() said yes (Spsc): copies the message ready()
  // saw into `out`, sets `length` and `flags`, and frees its slot. False,
  // with nothing taken, in every other case (not Spsc, ready() not asked or
  // said no, a length that is impossible or longer than `out`): try_pop then
  // does what it always does (skips and counts a corrupt slot, ...).
  [[nodiscard]] FERRY_HOT bool try_pop_ready(std::span<std::byte> out, std::uint32_t& length,
                                             std::uint32_t& flags, SlotMeta& meta) noexcept {
    const std::uint32_t h = head_;
    if (mode_ != RingMode::Spsc || h == cached_tail_) return false;
    // The slot header is read ONCE, as in next_slot(): the producer may be
    // broken or hostile and rewrite it behind our back. The tail it was
    // published with was read by ready() (acquire).
    const ring_layout::SlotHeader hdr = detail::unpack_header(detail::load_word(slot_at(h)));
    if (hdr.length > payload_max_ || hdr.length > out.size()) [[unlikely]]
      return false;
    std::memcpy(out.data(), slot_at(h) + ring_layout::kSlotHeaderBytes, hdr.length);
    std::memcpy(&meta, slot_at(h) + ring_layout::kSlotMetaOffset, sizeof meta);
    front_valid_ = false;  // as try_pop: a front() view is gone
    release_slot();
    length = hdr.length;
    flags = hdr.flags;
    return true;
  }

  // Batch (Spsc): takes up to `max` messages with ONE head store and at most
  // one wake-up of a producer waiting for room. visit(payload, flags) sees
  // each one whose length is possible, in order, and must copy what it
  // keeps (the slot is reused once this returns); a slot with an impossible
  // length is skipped and counted as corrupt, as try_pop does. Returns how
  // many slots it freed (0: empty); CorruptIndices as try_pop; WrongMode in
  // overwrite mode (take those one by one: each needs its own CAS).
  template <class Visit>
  [[nodiscard]] std::expected<std::uint32_t, RingError> consume_many(std::uint32_t max,
                                                                     Visit&& visit) noexcept {
    if (mode_ != RingMode::Spsc) return std::unexpected(RingError::WrongMode);
    front_valid_ = false;  // as try_pop: a front() view is gone
    const std::uint32_t h = head_;
    if (h == cached_tail_) {
      // SYNC: acquire, pairs with the producer's release store of tail in
      // publish(): the slots before it are fully written.
      const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
      if (t == h) return 0;
      if (t - h > capacity_) return std::unexpected(RingError::CorruptIndices);
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
      visit(std::span<const std::byte>(slot + ring_layout::kSlotHeaderBytes, hdr.length),
            hdr.flags);
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

  // Like try_pop, but waits for a message: spins, then sleeps on the data
  // doorbell, at most `timeout` from the moment it first decides to sleep.
  [[nodiscard]] std::expected<std::uint32_t, RingError> pop(std::span<std::byte> out,
                                                            std::uint32_t* flags,
                                                            std::chrono::nanoseconds timeout,
                                                            SlotMeta* meta = nullptr) noexcept {
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

  // In place (Spsc mode): a view of the oldest message, valid until
  // pop_front() releases its slot. Errors as try_pop (no BufferTooSmall).
  [[nodiscard]] std::expected<SlotView, RingError> front() noexcept {
    if (mode_ != RingMode::Spsc) return std::unexpected(RingError::WrongMode);
    auto slot = next_slot();
    if (!slot) return std::unexpected(slot.error());
    front_valid_ = true;
    SlotView view{
        std::span<const std::byte>(slot_at(head_) + ring_layout::kSlotHeaderBytes, (*slot).length),
        (*slot).flags};
    std::memcpy(&view.meta, slot_at(head_) + ring_layout::kSlotMetaOffset, sizeof view.meta);
    return view;
  }
  void pop_front() noexcept {
    if (!front_valid_) return;
    front_valid_ = false;
    release_slot();
  }

  // Polling: is a message waiting? Cheaper than a try_pop that finds
  // nothing, and takes nothing. Spsc: no shared load while the cached tail
  // already says yes; else one acquire load of tail (and, like try_pop, a
  // prefetch of the next slot's line, so that it travels with tail). True
  // also for corrupt indices: the try_pop that follows reports them.
  [[nodiscard]] FERRY_HOT bool ready() noexcept {
    if (mode_ != RingMode::Spsc) return has_data();
    const std::uint32_t h = head_;
    if (h != cached_tail_) return true;
    __builtin_prefetch(slot_at(h));
    // SYNC: acquire, pairs with the producer's release store of tail in
    // publish(): the slots before it are fully written.
    const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
    if (t == h) return false;
    if (t - h <= capacity_) {
      cached_tail_ = t;
      note_backlog(t - h);
    }  // else left for next_slot to report
    return true;
  }

  // Fresh read of tail: is there a message? For waiting on a shared doorbell
  // over several rings (doorbell_wait's ready()).
  // True when the producer closed the ring and every message is taken.
  [[nodiscard]] bool finished() const noexcept {
    // SYNC: acquire, pairs with the release store in RingProducer::close():
    // the tail it published before is visible to has_data() below.
    if (header_->producer.closed.load(std::memory_order_acquire) == 0) return false;
    return !has_data();
  }

  [[nodiscard]] bool has_data() const noexcept {
    // SYNC: acquire, pairs with the producer's release store of tail.
    const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
    if (mode_ == RingMode::Spsc) return t != head_;
    // SYNC: acquire, pairs with the producer's CAS of head (overwrite mode).
    return t != header_->consumer.head.load(std::memory_order_acquire);
  }

  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint32_t max_message_size() const noexcept { return payload_max_; }
  [[nodiscard]] RingMode mode() const noexcept { return mode_; }
  [[nodiscard]] DoorbellWord& data_doorbell() const noexcept { return *data_bell_; }
  [[nodiscard]] std::uint32_t spin_limit() const noexcept { return spin_.limit(); }
  // 0: pop() sleeps as soon as the ring is empty.
  void set_spin_limit(std::uint32_t iterations) noexcept { spin_.set_limit(iterations); }

 private:
  RingConsumer() = default;

  [[nodiscard]] std::byte* slot_at(std::uint32_t index) const noexcept {
    return slots_ + static_cast<std::size_t>(index & mask_) * slot_size_;
  }

  // Spsc: the header of the slot at head_, validated; skips corrupt slots.
  [[nodiscard]] std::expected<ring_layout::SlotHeader, RingError> next_slot() noexcept {
    const std::uint32_t h = head_;
    if (h == cached_tail_) {
      // Start fetching the slot while we fetch tail: when the message is
      // there, both lines travel from the producer's core at once instead of
      // one after the other. Measured on the 2-vCPU Xeon VM (ferry-bench-ring):
      // one-way p50 ~350 -> ~280 ns; throughput unchanged within noise.
      __builtin_prefetch(slot_at(h));
      // SYNC: acquire, pairs with the producer's release store of tail in
      // publish(): the slots before it are fully written.
      const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
      if (t == h) return std::unexpected(RingError::Empty);
      if (t - h > capacity_)
        return std::unexpected(RingError::CorruptIndices);  // cached_tail_ unchanged
      cached_tail_ = t;
      note_backlog(t - h);
    }
    // The length is read ONCE (one 8-byte load of {length, flags}); the
    // producer may be broken or hostile and rewrite it behind our back.
    const ring_layout::SlotHeader hdr = detail::unpack_header(detail::load_word(slot_at(h)));
    if (hdr.length > payload_max_) {
      count_corrupt();
      advance_head();  // skip it: not popped, counted as corrupt
      return std::unexpected(RingError::CorruptSlot);
    }
    return hdr;
  }

  // Spsc: the message at head_ was taken; its slot goes back to the producer.
  void release_slot() noexcept {
    count_popped();
    advance_head();
  }
  void advance_head() noexcept {
    ++head_;
    // SYNC: release, pairs with the producer's acquire load of head
    // (ensure_room/has_room): our reads of the slot happen before its reuse.
    header_->consumer.head.store(head_, std::memory_order_release);
    doorbell_notify(
        header_->space_bell);  // the fence in there orders the head store before `sleeping`
  }

  void count_popped() noexcept {
    ++popped_;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->consumer.popped.store(popped_, std::memory_order_relaxed);
  }
  // The producer samples the backlog only when the ring looks full; we do
  // whenever we re-read tail, so a queue that grows without filling (a slow
  // reader) is seen too. A store only when it grows: none in a steady state.
  void note_backlog(std::uint32_t waiting) noexcept {
    if (waiting <= max_backlog_) [[likely]]
      return;
    max_backlog_ = waiting;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->consumer.max_backlog.store(waiting, std::memory_order_relaxed);
  }
  void count_corrupt() noexcept {
    ++corrupt_;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->consumer.corrupt.store(corrupt_, std::memory_order_relaxed);
  }

  [[nodiscard]] std::expected<std::uint32_t, RingError> try_pop_overwrite(std::span<std::byte> out,
                                                                          std::uint32_t* flags,
                                                                          SlotMeta* meta) noexcept;
  [[nodiscard]] std::expected<std::uint32_t, RingError> pop_slow(std::span<std::byte> out,
                                                                 std::uint32_t* flags,
                                                                 std::chrono::nanoseconds timeout,
                                                                 SlotMeta* meta) noexcept;

  ring_layout::RingHeader* header_ = nullptr;
  std::byte* slots_ = nullptr;
  DoorbellWord* data_bell_ = nullptr;
  // Geometry, checked once at attach; never re-read from shared memory.
  std::uint32_t capacity_ = 0;
  std::uint32_t mask_ = 0;
  std::uint32_t slot_size_ = 0;
  std::uint32_t payload_max_ = 0;
  RingMode mode_ = RingMode::Spsc;
  detail::SpinBudget spin_;
  // Private indices: our head (Spsc; overwrite mode re-reads it), cached tail.
  std::uint32_t head_ = 0;
  std::uint32_t cached_tail_ = 0;
  bool front_valid_ = false;
  std::uint64_t popped_ = 0;
  std::uint64_t corrupt_ = 0;
  std::uint32_t max_backlog_ = 0;
};

// ---------------------------------------------------------------------------

template <class OnDiscard>
std::expected<PushOutcome, RingError> RingProducer::try_push_overwrite(
    std::span<const std::byte> msg, std::uint32_t flags, OnDiscard&& on_discard,
    const SlotMeta& meta) noexcept {
  if (mode_ != RingMode::Overwrite) return std::unexpected(RingError::WrongMode);
  if (msg.size() > payload_max_) return std::unexpected(RingError::TooLarge);
  publish();  // nothing may stay staged: the discard below assumes next_ == tail_
  claimed_ = false;
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
  claimed_ = false;
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
