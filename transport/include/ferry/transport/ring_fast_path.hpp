#pragma once
// The inline fast path of a ring's two ends: the state and the few functions
// that a port with one queue compiles into the caller (ferry/detail/lane.hpp).
// RingProducer and RingConsumer (ring_handles.hpp, described there) are
// built on these classes, so each path has one implementation. The offsets
// are tied to ring_layout.hpp by static_asserts in ring.cpp.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <expected>
#include <span>

#include "ferry/transport/doorbell_word.hpp"
#include "ferry/transport/platform.hpp"

namespace ferry::transport {

enum class RingError : std::uint8_t {
  Full,             // no free slot (try_push, stage_many)
  Empty,            // nothing to take (try_pop)
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

// Carried with every message, opaque to the ring (ferry::SampleInfo).
struct SlotMeta {
  std::uint64_t sequence = 0;         // per publisher, one per publish()
  std::uint64_t publisher_id = 0;     // unique in the domain while the publisher lives
  std::uint64_t publish_time_ns = 0;  // CLOCK_REALTIME at publish()
  bool operator==(const SlotMeta&) const = default;
};

// What a slot's flags (opaque to the ring) say it carries (slot_format.hpp).
inline constexpr std::uint32_t kSlotInline = 0;  // the sample's bytes
inline constexpr std::uint32_t kSlotPooled = 1;  // a PooledSlot: a pool reference

enum class RingMode : std::uint32_t {
  Spsc = 1,       // plain single-producer/single-consumer: full means Full
  Overwrite = 2,  // the producer may discard the oldest message (drop_oldest)
};

namespace ring_layout {
struct RingHeader;  // ring_layout.hpp
// Where the words the fast path touches are in a RingHeader.
inline constexpr std::size_t kTailOffset = 64;              // producer.tail
inline constexpr std::size_t kPushedOffset = 72;            // producer.pushed
inline constexpr std::size_t kProducerBacklogOffset = 104;  // producer.max_backlog
inline constexpr std::size_t kHeadOffset = 128;             // consumer.head
inline constexpr std::size_t kPoppedOffset = 136;           // consumer.popped
inline constexpr std::size_t kConsumerBacklogOffset = 152;  // consumer.max_backlog
inline constexpr std::size_t kSpaceBellOffset = 256;        // space_bell
struct SlotHeader {
  std::uint32_t length;  // payload bytes used
  std::uint32_t flags;   // opaque to the ring, carried with the message
};
// A slot: {length, flags} at 0, the SlotMeta at 8, the payload at 32.
inline constexpr std::size_t kSlotMetaOffset = sizeof(SlotHeader);
inline constexpr std::size_t kSlotHeaderBytes = sizeof(SlotHeader) + sizeof(SlotMeta);
}  // namespace ring_layout

namespace detail {

inline std::uint64_t load_word(const std::byte* p) noexcept {
  // atomic_ref needs a non-const object; this is a load only.
  // SYNC: relaxed; ordering comes from the index acquire/CAS around the caller.
  return std::atomic_ref<std::uint64_t>(
             *reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_relaxed);
}
inline ring_layout::SlotHeader unpack_header(std::uint64_t w) noexcept {
  ring_layout::SlotHeader h{};
  std::memcpy(&h, &w, sizeof h);
  return h;
}

// How the producer writes a message into an overwrite ring's slot
// (ring_overwrite.cpp).
void write_overwrite_slot(std::byte* slot, std::span<const std::byte> msg, std::uint32_t flags,
                          const SlotMeta& meta) noexcept;

}  // namespace detail

// What both ends keep of a ring: where it is, and its geometry (checked at
// attach, never re-read from shared memory).
class RingEnd {
 protected:
  // The word of type T at `offset` bytes into the ring's header.
  template <class T>
  [[nodiscard]] T& word(std::size_t offset) const noexcept {
    return *reinterpret_cast<T*>(reinterpret_cast<std::byte*>(header_) + offset);
  }
  [[nodiscard]] std::byte* slot_at(std::uint32_t index) const noexcept {
    return slots_ + static_cast<std::size_t>(index & mask_) * slot_size_;
  }

  ring_layout::RingHeader* header_ = nullptr;
  std::byte* slots_ = nullptr;
  std::uint32_t capacity_ = 0;
  std::uint32_t mask_ = 0;
  std::uint32_t slot_size_ = 0;
  std::uint32_t payload_max_ = 0;
  RingMode mode_ = RingMode::Spsc;
};

// Whether a publish drains its stores at once (a seq_cst fence the handshake
// does not need): sooner for a reader that waits, slower in a stream (hot-path.md).
enum class Flush : std::uint8_t {
  Later,    // a stream or a batch
  Now,      // a message that stands alone
  IfAlone,  // Now when the previous try_push was published kStreamGapNs before
};
inline constexpr std::uint64_t kStreamGapNs = 250;

// The producer's fast path. try_push is the one way in for one message.
class ProducerFastPath : public RingEnd {
 public:
  // Copies `msg` into the next slot and publishes it (with anything staged
  // before), or fails with Full, TooLarge or CorruptIndices having written
  // nothing (Full is not counted: the caller's policy decides).
  [[nodiscard]] FERRY_HOT std::expected<void, RingError> try_push(
      std::span<const std::byte> msg, std::uint32_t flags = 0, const SlotMeta& meta = {},
      Flush flush = Flush::Later) noexcept {
    if (msg.size() > payload_max_) [[unlikely]]
      return refused(RingError::TooLarge);
    if (next_ - cached_head_ >= capacity_) {
      if (auto room = ensure_room(); !room) return refused(room.error());
    }
    write_slot(next_, msg, flags, meta);
    ++next_;
    if (flush == Flush::IfAlone) {  // unsigned: a clock stepping back counts as a gap
      flush = meta.publish_time_ns - last_publish_ns_ > kStreamGapNs ? Flush::Now : Flush::Later;
      last_publish_ns_ = meta.publish_time_ns;
    }
    publish(flush);
    return {};
  }

  // A hint for the try_push of `size` bytes that follows: takes the slot's
  // lines and the tail line from the consumer, which read them last (both
  // transfers at once: hot-path.md). Reads no shared memory; nothing if full.
  FERRY_HOT void prefetch_next_slot(std::uint32_t size) const noexcept {
    if (next_ - cached_head_ >= capacity_) return;
    const std::byte* slot = slot_at(next_);
    prefetch_for_write(slot);
    std::uint32_t head_bytes = size < payload_max_ ? size : payload_max_;
    if (head_bytes > kCacheLine) head_bytes = kCacheLine;
    if (head_bytes != 0) prefetch_for_write(slot + ring_layout::kSlotHeaderBytes + head_bytes - 1);
    prefetch_for_write(&word<std::atomic<std::uint32_t>>(ring_layout::kTailOffset));
  }

  // Publishes what stage_many() wrote; returns how many.
  FERRY_HOT std::uint32_t publish(Flush flush = Flush::Later) noexcept {
    const std::uint32_t n = next_ - tail_;
    if (n == 0) return 0;
    tail_ = next_;
    // SYNC: release, pairs with the acquire loads of tail in RingConsumer
    // (try_pop, ready, has_data, consume_many): the slots written before are visible.
    word<std::atomic<std::uint32_t>>(ring_layout::kTailOffset)
        .store(tail_, std::memory_order_release);
    pushed_ += n;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    word<std::atomic<std::uint64_t>>(ring_layout::kPushedOffset)
        .store(pushed_, std::memory_order_relaxed);
    // SYNC: pairs with nothing (Flush): a seq_cst fence here only drains our stores now.
    if (flush == Flush::Now) std::atomic_thread_fence(std::memory_order_seq_cst);
    doorbell_notify(*data_bell_);  // the fence in there orders the tail store before `sleeping`
    return n;
  }

 protected:
  // A push that wrote nothing still publishes what was staged.
  [[nodiscard]] std::expected<void, RingError> refused(RingError e) noexcept {
    publish();
    return std::unexpected(e);
  }

  // Room at next_? Re-reads head only when the cached value says full.
  [[nodiscard]] std::expected<void, RingError> ensure_room() noexcept {
    if (next_ - cached_head_ < capacity_) return {};
    // SYNC: acquire, pairs with the consumer's release store (or CAS) of head:
    // its reads of the slots it freed happen before we overwrite them.
    cached_head_ =
        word<std::atomic<std::uint32_t>>(ring_layout::kHeadOffset).load(std::memory_order_acquire);
    const std::uint32_t used = next_ - cached_head_;
    if (used > capacity_) return std::unexpected(RingError::CorruptIndices);
    note_backlog(used);
    if (used == capacity_) return std::unexpected(RingError::Full);
    return {};
  }

  // Sampled when head is re-read: exact then, never over-estimated.
  void note_backlog(std::uint32_t used) noexcept {
    if (used <= max_backlog_) return;
    max_backlog_ = used;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    word<std::atomic<std::uint32_t>>(ring_layout::kProducerBacklogOffset)
        .store(used, std::memory_order_relaxed);
  }

  // The one place the protocol decides how a slot is written. Spsc: plain
  // copies (the consumer reads the slot only after our release store of
  // tail, we reuse it only after its release store of head).
  FERRY_HOT void write_slot(std::uint32_t index, std::span<const std::byte> msg,
                            std::uint32_t flags, const SlotMeta& meta) noexcept {
    std::byte* slot = slot_at(index);
    if (mode_ != RingMode::Spsc) return detail::write_overwrite_slot(slot, msg, flags, meta);
    const auto length = static_cast<std::uint32_t>(msg.size());
    const ring_layout::SlotHeader h{length, flags};
    std::memcpy(slot, &h, sizeof h);
    std::memcpy(slot + ring_layout::kSlotMetaOffset, &meta, sizeof meta);
    if (length != 0) std::memcpy(slot + ring_layout::kSlotHeaderBytes, msg.data(), length);
  }

  DoorbellWord* data_bell_ = nullptr;  // the ring's own, or the consumer's shared one
  // Private: published tail, next slot to write, cached head.
  std::uint32_t tail_ = 0;
  std::uint32_t next_ = 0;
  std::uint32_t cached_head_ = 0;
  std::uint64_t pushed_ = 0;  // shadows of the counters (never read back)
  std::uint32_t max_backlog_ = 0;
  std::uint64_t last_publish_ns_ = 0;  // Flush::IfAlone: the previous try_push's publish time
};

// The consumer's fast path: ready() then try_pop_ready().
class ConsumerFastPath : public RingEnd {
 public:
  // Polling: is a message waiting? Spsc: no shared load while the cached
  // tail says yes; else one acquire load of tail (the slot's lines prefetched
  // to travel with it). True also for corrupt indices until a try_pop
  // reported them (and marked the queue broken); false for good after that.
  [[nodiscard]] FERRY_HOT bool ready() noexcept {
    if (mode_ != RingMode::Spsc) return has_data();
    const std::uint32_t h = head_;
    if (h != cached_tail_) return true;
    __builtin_prefetch(slot_at(h));               // the slot's two first lines (a 64 B
    __builtin_prefetch(slot_at(h) + kCacheLine);  // sample spans both) travel with tail
    // SYNC: acquire, pairs with the producer's release store of tail in
    // publish(): the slots before it are fully written.
    const std::uint32_t t =
        word<std::atomic<std::uint32_t>>(ring_layout::kTailOffset).load(std::memory_order_acquire);
    if (t == h) return false;
    // Nothing is written here: a forked child's copy of an inherited port
    // polls ready() before it learns that the node is not its own.
    if (t - h <= capacity_ && !broken_) [[likely]] {
      cached_tail_ = t;
      return true;
    }
    // Impossible indices: ready once, so that the caller's pop marks the
    // queue broken and counts it.
    return !broken_;
  }

  // The short way after ready() said yes (no std::expected, no re-check):
  // copies the message into `out` and frees its slot. False, with nothing
  // taken, in every other case (not Spsc, ready() not asked or said no, a
  // length impossible or longer than `out`): then try_pop decides.
  [[nodiscard]] FERRY_HOT bool try_pop_ready(std::span<std::byte> out, std::uint32_t& length,
                                             std::uint32_t& flags, SlotMeta& meta) noexcept {
    const std::uint32_t h = head_;
    if (mode_ != RingMode::Spsc || h == cached_tail_) return false;
    // The slot header is read ONCE: the producer may be broken or hostile
    // and rewrite it behind our back. ready() read the tail (acquire).
    const ring_layout::SlotHeader hdr = detail::unpack_header(detail::load_word(slot_at(h)));
    if (hdr.length > payload_max_ || hdr.length > out.size()) [[unlikely]]
      return false;
    std::memcpy(out.data(), slot_at(h) + ring_layout::kSlotHeaderBytes, hdr.length);
    std::memcpy(&meta, slot_at(h) + ring_layout::kSlotMetaOffset, sizeof meta);
    release_slot();
    length = hdr.length;
    flags = hdr.flags;
    return true;
  }

  // RingConsumer::try_pop, out of line: after try_pop_ready said no.
  [[nodiscard]] std::expected<std::uint32_t, RingError> try_pop_general(std::span<std::byte> out,
                                                                        std::uint32_t* flags,
                                                                        SlotMeta* meta) noexcept;

  // Fresh read of tail: is there a message? For waiting on a shared doorbell
  // over several rings; false for impossible indices and a broken queue.
  [[nodiscard]] bool has_data() const noexcept {
    if (broken_) [[unlikely]]
      return false;
    // SYNC: acquire, pairs with the producer's release store of tail.
    const std::uint32_t t =
        word<std::atomic<std::uint32_t>>(ring_layout::kTailOffset).load(std::memory_order_acquire);
    if (mode_ == RingMode::Spsc) return t != head_ && t - head_ <= capacity_;
    // SYNC: acquire, pairs with the producer's CAS of head (overwrite mode).
    const std::uint32_t h =
        word<std::atomic<std::uint32_t>>(ring_layout::kHeadOffset).load(std::memory_order_acquire);
    // Head past tail (signed distance < 0): a tail read before the producer
    // moved on; false is safe for a waiter (ring_handles.hpp, has_data()).
    const auto distance = static_cast<std::int32_t>(t - h);
    return distance > 0 && static_cast<std::uint32_t>(distance) <= capacity_;
  }

 protected:
  ConsumerFastPath() = default;  // only as a RingConsumer
  // Spsc: the message at head_ was taken; its slot goes back. The backlog
  // is noted here, never by ready(): cached_tail_ - head_ is what waited.
  void release_slot() noexcept {
    note_backlog(cached_tail_ - head_);
    count_popped();
    advance_head();
  }
  void count_popped() noexcept {
    ++popped_;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    word<std::atomic<std::uint64_t>>(ring_layout::kPoppedOffset)
        .store(popped_, std::memory_order_relaxed);
  }
  void advance_head() noexcept {
    ++head_;
    // SYNC: release, pairs with the producer's acquire load of head
    // (ensure_room/has_room): our reads of the slot happen before its reuse.
    word<std::atomic<std::uint32_t>>(ring_layout::kHeadOffset)
        .store(head_, std::memory_order_release);
    // The fence in there orders the head store before `sleeping`.
    doorbell_notify(word<DoorbellWord>(ring_layout::kSpaceBellOffset));
  }
  // Whenever we re-read tail (the producer only when full), so a slow
  // reader's queue is seen too; a store only when it grows.
  void note_backlog(std::uint32_t waiting) noexcept {
    if (waiting <= max_backlog_) [[likely]]
      return;
    max_backlog_ = waiting;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    word<std::atomic<std::uint32_t>>(ring_layout::kConsumerBacklogOffset)
        .store(waiting, std::memory_order_relaxed);
  }

  // Private: our head (Spsc; overwrite mode re-reads it), cached tail.
  std::uint32_t head_ = 0;
  std::uint32_t cached_tail_ = 0;
  std::uint64_t popped_ = 0;
  std::uint32_t max_backlog_ = 0;
  bool broken_ = false;  // impossible indices seen (broken())
};

}  // namespace ferry::transport
