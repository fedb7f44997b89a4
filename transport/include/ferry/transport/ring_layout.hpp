#pragma once
// The ring's shared-memory layout. No pointers: indices and sizes only, so
// every process can map it at any address.
//
//   line 0  geometry: written by format_ring, read-only afterwards
//   line 1  producer: tail + producer counters (written by the producer only)
//   line 2  consumer: head + consumer counters (written by the consumer only;
//           in overwrite mode the producer may also CAS head)
//   line 3  data doorbell: the consumer sleeps here (unless an external
//           doorbell is used), the producer rings it
//   line 4  space doorbell: the producer sleeps here waiting for room, the
//           consumer rings it
//   then    capacity slots of slot_size bytes: {u32 length, u32 flags,
//           SlotMeta (3 x u64), payload}
//
// Indices are free-running u32: tail - head (unsigned) is the number of
// messages, slot = index & mask. A reader never trusts this memory: handles
// copy the geometry once at attach, after checking it.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ferry/transport/doorbell_word.hpp"
#include "ferry/transport/platform.hpp"
#include "ferry/transport/ring_fast_path.hpp"  // SlotMeta, RingMode, SlotHeader

namespace ferry::transport {

inline constexpr std::uint32_t kRingMagic = 0x474e5246;  // "FRNG"
// 2: slots carry a SlotMeta after {length, flags} (sample metadata).
inline constexpr std::uint32_t kRingLayoutVersion = 2;

// SlotMeta (carried with every message) and RingMode: ring_fast_path.hpp.
static_assert(sizeof(SlotMeta) == 24);

namespace ring_layout {

struct alignas(kCacheLine) GeometryLine {
  std::uint32_t magic;           // kRingMagic
  std::uint32_t layout_version;  // kRingLayoutVersion
  std::uint32_t capacity;        // power of two
  std::uint32_t mask;            // capacity - 1
  std::uint32_t slot_size;       // bytes per slot, multiple of 8, header included
  std::uint32_t mode;            // RingMode
  std::uint32_t slots_offset;    // bytes from the ring start to slot 0
  std::uint32_t reserved0;
  std::uint64_t total_bytes;  // ring_bytes(geometry)
  std::uint8_t reserved[24];
};

struct alignas(kCacheLine) ProducerLine {
  std::atomic<std::uint32_t> tail;  // next index the producer publishes
  std::uint32_t reserved0;
  // Counters: single writer (the producer), relaxed stores, read by anyone.
  std::atomic<std::uint64_t> pushed;       // messages published
  std::atomic<std::uint64_t> dropped;      // refused by the caller's policy (count_dropped)
  std::atomic<std::uint64_t> overwritten;  // oldest discarded to make room (overwrite mode)
  std::atomic<std::uint64_t> timed_out;    // push() deadlines missed (and count_timed_out)
  std::atomic<std::uint32_t> max_backlog;  // largest backlog the producer observed
  // 1 once the producer will push no more (it moved to another ring after a
  // daemon restart): a consumer that finds the ring empty then is done.
  std::atomic<std::uint32_t> closed;
  std::uint8_t reserved[8];
};

struct alignas(kCacheLine) ConsumerLine {
  std::atomic<std::uint32_t> head;  // next index the consumer takes
  std::uint32_t reserved0;
  // Counters: single writer (the consumer), relaxed stores, read by anyone.
  std::atomic<std::uint64_t> popped;   // messages taken
  std::atomic<std::uint64_t> corrupt;  // slots skipped because their length was invalid
  // Largest backlog the consumer observed (when it re-read tail). Was
  // reserved (zero) before: readers of either layout agree.
  std::atomic<std::uint32_t> max_backlog;
  // 1 once the consumer will take no more (its subscriber port is gone):
  // a producer waiting for room gives up, and a queue of a previous ferryd
  // is retired by its publisher. Was reserved (zero) before.
  std::atomic<std::uint32_t> left;
  std::uint8_t reserved[32];
};

struct RingHeader {
  GeometryLine geometry;
  ProducerLine producer;
  ConsumerLine consumer;
  DoorbellWord data_bell;
  DoorbellWord space_bell;
};

static_assert(sizeof(GeometryLine) == kCacheLine);
static_assert(sizeof(ProducerLine) == kCacheLine);
static_assert(sizeof(ConsumerLine) == kCacheLine);
static_assert(sizeof(RingHeader) == 5 * kCacheLine);
static_assert(alignof(RingHeader) == kCacheLine);
static_assert(offsetof(RingHeader, geometry) == 0 * kCacheLine);
static_assert(offsetof(RingHeader, producer) == 1 * kCacheLine);
static_assert(offsetof(RingHeader, consumer) == 2 * kCacheLine);
static_assert(offsetof(RingHeader, data_bell) == 3 * kCacheLine);
static_assert(offsetof(RingHeader, space_bell) == 4 * kCacheLine);
static_assert(offsetof(GeometryLine, capacity) == 8);
static_assert(offsetof(GeometryLine, mask) == 12);
static_assert(offsetof(GeometryLine, slot_size) == 16);
static_assert(offsetof(GeometryLine, total_bytes) == 32);
static_assert(offsetof(ProducerLine, tail) == 0);
static_assert(offsetof(ProducerLine, pushed) == 8);
static_assert(offsetof(ProducerLine, max_backlog) == 40);
static_assert(offsetof(ConsumerLine, head) == 0);
static_assert(offsetof(ConsumerLine, max_backlog) == 24);
static_assert(offsetof(ConsumerLine, popped) == 8);
static_assert(offsetof(ConsumerLine, corrupt) == 16);
static_assert(offsetof(ConsumerLine, left) == 28);
static_assert(sizeof(SlotHeader) == 8 && offsetof(SlotHeader, flags) == 4);
static_assert(offsetof(SlotMeta, sequence) == 0 && offsetof(SlotMeta, publisher_id) == 8 &&
              offsetof(SlotMeta, publish_time_ns) == 16);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint64_t>) == 8);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint64_t>::required_alignment == 8);

inline constexpr std::size_t kSlotsOffset = sizeof(RingHeader);
static_assert(kSlotHeaderBytes == 32);
inline constexpr std::uint32_t kMinSlotSize = 40;                      // header + 8 bytes
inline constexpr std::uint32_t kMaxSlotSize = std::uint32_t{1} << 24;  // 16 MiB
// Far below 2^31, so that tail - head is never ambiguous.
inline constexpr std::uint32_t kMaxCapacity = std::uint32_t{1} << 24;

}  // namespace ring_layout
}  // namespace ferry::transport
