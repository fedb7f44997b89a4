#pragma once
// The loaned-memory pool's shared-memory layout and the encodings of its
// atomic words (state, holder and link words). No pointers: offsets and
// indices only, so every process can map the pool at any address.
// docs/design/pool.md explains the protocol.
//
//   line 0      PoolHeader: magic, version, class count, sizes (read-only after format)
//   line 1      PoolCounters: pool-wide event counters (many writers, fetch_add)
//   n lines     ClassEntry[n]: each class's geometry (read-only after format)
//   17n lines   ClassCounters[n]: each class's counters (many writers): a
//               shared line, then one line of running counts per owner
//               id modulo kOwnerCountLines
//   per class   ChunkMeta[count] (128 bytes each), then the free hints
//               (one bit per chunk, 64-byte padded)
//   per class   payloads: count x chunk_size bytes, each 64-byte aligned
//   node area   NodeCounters (a line), then ChunkMeta[holder_nodes]: the
//               overflow holder nodes (a chunk's holders beyond the 13 its
//               own metadata has room for), then their free hints (one bit
//               per node, 64-byte padded)
//
// Metadata and payloads are apart: a scan of the metadata (reclaim, stats)
// never touches a payload page, and a payload write never dirties a line
// another process reads to find chunks. docs/design/pool.md explains the
// holder nodes.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ferry/transport/platform.hpp"

namespace ferry::transport {

inline constexpr std::uint32_t kPoolMagic = 0x4c4f5046;  // "FPOL"
// 2: ClassCounters on two lines; 3: running counts on one line per owner id
// modulo kOwnerCountLines; 4: the overflow-node area (a chunk's holders in a
// chain of holder nodes, slot 13 of each node the link to the next).
inline constexpr std::uint32_t kPoolLayoutVersion = 4;

inline constexpr std::uint32_t kMaxPoolClasses = 32;
// A ChunkRef packs the index into 24 bits and the class into 8.
inline constexpr std::uint32_t kMaxChunksPerClass = std::uint32_t{1} << 24;
inline constexpr std::uint64_t kMinPoolChunkSize = kCacheLine;
inline constexpr std::uint64_t kMaxPoolChunkSize = std::uint64_t{1}
                                                   << 30;  // 1 GiB, the largest sample
// Slots of one holder node (a chunk's own metadata, or an overflow node): a
// node's state word has two bits per slot. Slots 0..12 hold holders ((owner,
// giver) pairs); slot 13 links the next node of the chunk's chain, so a
// chunk has any number of holders (docs/design/pool.md, "Holder nodes").
inline constexpr std::uint32_t kSlotsPerNode = 14;
inline constexpr std::uint32_t kHolderSlotsPerNode = 13;
inline constexpr unsigned kLinkSlot = 13;
// Overflow holder nodes a pool can have (a link names one in 24 bits).
inline constexpr std::uint32_t kMaxHolderNodes = std::uint32_t{1} << 24;
// References one holder slot can count (held + pending).
inline constexpr std::uint32_t kMaxRefsPerHolder = 4095;

namespace pool_layout {

struct alignas(kCacheLine) PoolHeader {
  std::atomic<std::uint32_t> magic;  // kPoolMagic, stored last by format_pool (release)
  std::uint32_t layout_version;      // kPoolLayoutVersion
  std::uint32_t class_count;         // 1..kMaxPoolClasses
  std::uint32_t slots_per_node;      // kSlotsPerNode
  std::uint64_t total_bytes;         // pool_bytes(geometry)
  std::uint32_t meta_size;           // sizeof(ChunkMeta)
  std::uint32_t holder_nodes;        // overflow nodes, 1..kMaxHolderNodes
  std::uint64_t class_table_offset;  // offset of ClassEntry[0]
  std::uint64_t total_chunks;
  std::uint64_t node_meta_offset;  // ChunkMeta[holder_nodes]
  std::uint64_t node_hint_offset;  // std::atomic<u64>[ceil(holder_nodes / 64)]
};

// Pool-wide counters: any process adds to them (relaxed fetch_add), anyone
// reads them.
struct alignas(kCacheLine) PoolCounters {
  std::atomic<std::uint64_t> invalid_refs;  // references with a bad class, index or generation 0
  std::atomic<std::uint64_t>
      stale_refs;  // references whose chunk moved on (generation) or is not live
  std::atomic<std::uint64_t> not_held;         // operations on a reference the owner did not hold
  std::atomic<std::uint64_t> corrupt;          // impossible values found in the pool's shared words
  std::atomic<std::uint64_t> holder_overflow;  // TooManyHolders
  std::atomic<std::uint64_t> contended;  // operations that gave up after kPoolMaxRetries lost races
  std::atomic<std::uint64_t> reclaims;   // reclaim_owner runs
  std::atomic<std::uint64_t> reclaimed_refs;  // references reclaim_owner and settle_pending dropped
};

struct alignas(kCacheLine) ClassEntry {
  std::uint64_t chunk_size;       // multiple of 64
  std::uint32_t count;            // chunks, 1..kMaxChunksPerClass
  std::uint32_t hint_words;       // ceil(count / 64)
  std::uint64_t meta_offset;      // ChunkMeta[count]
  std::uint64_t hint_offset;      // std::atomic<u64>[hint_words]
  std::uint64_t payload_offset;   // count x chunk_size bytes
  std::uint64_t counters_offset;  // ClassCounters
  std::uint8_t reserved[16];
};

// Lines of running counts per class: owner o adds its allocations and frees
// to line o % kOwnerCountLines. Owner ids are handed out in sequence, so up
// to 16 nodes each write a line of their own: in a stream (or a ping-pong)
// no count moves between the cores of publisher and subscriber (measured:
// one shared line per direction cost a 64 B loan 0.2x of an inline sample's
// latency). Owners beyond share lines: the sums stay exact (every change is
// a fetch_add), only slower.
inline constexpr std::uint32_t kOwnerCountLines = 16;

struct alignas(kCacheLine) OwnerCounts {
  std::atomic<std::int64_t> allocated;  // chunks these owners allocated, ever
  std::atomic<std::int64_t> freed;      // chunks these owners freed (their last reference), ever
  std::uint64_t reserved[6];
};

// Per class counters (many writers, relaxed). in_use = sum(allocated) -
// sum(freed) is a running count, exact unless a process died inside
// allocate/release (docs/design/pool.md, crash table); the exact free count
// comes from a scan (read_pool_stats). The high-water mark is raised by allocations
// that search the hints (the class grows into chunks nobody just freed),
// and a reader reports at least the in_use it adds up; an allocation that
// recycles a chunk its handle just freed or allocated does not add up the
// lines (that would move them all to its core).
struct alignas(kCacheLine) ClassCounters {
  std::atomic<std::int64_t>
      peak_in_use;  // high-water mark of in_use: total - peak is the free low-water mark
  std::atomic<std::uint64_t> exhausted;  // allocations that found this class empty
  std::atomic<std::uint64_t>
      fallbacks;  // allocations served here because a smaller fitting class was empty
  std::uint64_t reserved0[5];
  OwnerCounts by_owner[kOwnerCountLines];
};

// The overflow-node area's counters (many writers, relaxed).
struct alignas(kCacheLine) NodeCounters {
  std::atomic<std::uint64_t> exhausted;  // a chain could not grow: no free overflow node
  std::atomic<std::uint64_t> links;      // overflow nodes linked into chains, ever
  std::uint64_t reserved[6];
};

// One holder node: a chunk's metadata (2 cache lines, apart from its
// payload), or an overflow node of the node area (the same layout).
struct alignas(kCacheLine) ChunkMeta {
  std::atomic<std::uint64_t> state;  // state word (encoding below)
  // A chunk: the owner (bits 0..15) that allocated generation (bits 32..63);
  // stats only. An overflow node: the packed ChunkRef of the chunk whose
  // chain it extends (written while Claimed, checked by every walk).
  std::atomic<std::uint64_t> origin;
  // Slots 0..12: holder words; slot 13: the link word (encodings below).
  std::atomic<std::uint64_t> holders[kSlotsPerNode];
};

static_assert(sizeof(PoolHeader) == kCacheLine);
static_assert(sizeof(PoolCounters) == kCacheLine);
static_assert(sizeof(ClassEntry) == kCacheLine);
static_assert(sizeof(OwnerCounts) == kCacheLine);
static_assert(sizeof(NodeCounters) == kCacheLine);
static_assert(sizeof(ClassCounters) == (1 + kOwnerCountLines) * kCacheLine);
static_assert(offsetof(ClassCounters, by_owner) == kCacheLine);
static_assert(offsetof(OwnerCounts, freed) == 8);
static_assert(sizeof(ChunkMeta) == 2 * kCacheLine);
static_assert(alignof(ChunkMeta) == kCacheLine);
static_assert(offsetof(PoolHeader, magic) == 0);
static_assert(offsetof(PoolHeader, layout_version) == 4);
static_assert(offsetof(PoolHeader, class_count) == 8);
static_assert(offsetof(PoolHeader, total_bytes) == 16);
static_assert(offsetof(PoolHeader, holder_nodes) == 28);
static_assert(offsetof(PoolHeader, class_table_offset) == 32);
static_assert(offsetof(PoolHeader, node_meta_offset) == 48);
static_assert(offsetof(PoolHeader, node_hint_offset) == 56);
static_assert(offsetof(ClassEntry, count) == 8);
static_assert(offsetof(ClassEntry, meta_offset) == 16);
static_assert(offsetof(ClassEntry, payload_offset) == 32);
static_assert(offsetof(ChunkMeta, state) == 0);
static_assert(offsetof(ChunkMeta, origin) == 8);
static_assert(offsetof(ChunkMeta, holders) == 16);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint64_t>) == 8);

inline constexpr std::size_t kHeaderOffset = 0;
inline constexpr std::size_t kCountersOffset = sizeof(PoolHeader);
inline constexpr std::size_t kClassTableOffset = kCountersOffset + sizeof(PoolCounters);

// ---------------------------------------------------------------------------
// State word (one per holder node, so one per chunk and one per overflow
// node; every change is one CAS or, while the node is exclusively claimed,
// one store):
//   bits  0..31  generation, never 0; bumped when the node is freed
//   bits 32..33  mode: 0 Free, 1 Claimed, 2 Live, 3 invalid
//   bits 34..61  Live: 14 slot states, 2 bits each (slot 13: the link):
//                0 Empty, 1 Reserving, 2 Live, 3 invalid
//                Claimed: bits 34..49 hold the claiming owner
//                Free: all zero
//   bits 62..63  zero
namespace state {
inline constexpr std::uint64_t kGenMask = 0xFFFF'FFFFULL;
inline constexpr unsigned kModeShift = 32;
inline constexpr std::uint64_t kModeFree = 0;
inline constexpr std::uint64_t kModeClaimed = 1;
inline constexpr std::uint64_t kModeLive = 2;
inline constexpr std::uint64_t kModeInvalid = 3;
inline constexpr unsigned kSlotShift = 34;
inline constexpr std::uint64_t kSlotFieldMask = ((std::uint64_t{1} << (2 * kSlotsPerNode)) - 1)
                                                << kSlotShift;
inline constexpr std::uint64_t kTopMask = std::uint64_t{3} << 62;
inline constexpr unsigned kSlotEmpty = 0;
inline constexpr unsigned kSlotReserving = 1;
inline constexpr unsigned kSlotLive = 2;
// One bit per slot pair, the low bit of each 2-bit field.
inline constexpr std::uint64_t kPairLowBits = 0x555'5555ULL;  // 14 pairs
// The pairs of the holder slots 0..12 (not the link slot).
inline constexpr std::uint64_t kHolderPairLowBits = 0x155'5555ULL;
inline constexpr std::uint64_t kLinkPairLowBit = std::uint64_t{1} << (2 * kLinkSlot);
static_assert(kSlotShift + 2 * kSlotsPerNode <= 62);
static_assert((kHolderPairLowBits | kLinkPairLowBit) == kPairLowBits);

[[nodiscard]] constexpr std::uint32_t generation(std::uint64_t s) noexcept {
  return static_cast<std::uint32_t>(s & kGenMask);
}
[[nodiscard]] constexpr std::uint64_t mode(std::uint64_t s) noexcept {
  return (s >> kModeShift) & 3;
}
[[nodiscard]] constexpr unsigned slot(std::uint64_t s, unsigned j) noexcept {
  return static_cast<unsigned>((s >> (kSlotShift + 2 * j)) & 3);
}
[[nodiscard]] constexpr std::uint64_t with_slot(std::uint64_t s, unsigned j, unsigned v) noexcept {
  const unsigned shift = kSlotShift + 2 * j;
  return (s & ~(std::uint64_t{3} << shift)) | (std::uint64_t{v} << shift);
}
[[nodiscard]] constexpr std::uint64_t slot_field(std::uint64_t s) noexcept {
  return (s & kSlotFieldMask) >> kSlotShift;
}
// Bit 2j set for each Live slot j.
[[nodiscard]] constexpr std::uint64_t live_pairs(std::uint64_t s) noexcept {
  const std::uint64_t f = slot_field(s);
  return (f >> 1) & ~f & kPairLowBits;
}
// Bit 2j set for each Empty slot j.
[[nodiscard]] constexpr std::uint64_t empty_pairs(std::uint64_t s) noexcept {
  const std::uint64_t f = slot_field(s);
  return ~(f >> 1) & ~f & kPairLowBits;
}
// Bit 2j set for each Reserving slot j.
[[nodiscard]] constexpr std::uint64_t reserving_pairs(std::uint64_t s) noexcept {
  const std::uint64_t f = slot_field(s);
  return ~(f >> 1) & f & kPairLowBits;
}
// No slot in the invalid state 3.
[[nodiscard]] constexpr bool slots_valid(std::uint64_t s) noexcept {
  const std::uint64_t f = slot_field(s);
  return ((f >> 1) & f & kPairLowBits) == 0;
}
[[nodiscard]] constexpr std::uint64_t make_free(std::uint32_t gen) noexcept { return gen; }
[[nodiscard]] constexpr std::uint64_t make_claimed(std::uint32_t gen,
                                                   std::uint16_t owner) noexcept {
  return gen | (kModeClaimed << kModeShift) | (std::uint64_t{owner} << kSlotShift);
}
[[nodiscard]] constexpr std::uint16_t claimer(std::uint64_t s) noexcept {
  return static_cast<std::uint16_t>((s >> kSlotShift) & 0xFFFF);
}
[[nodiscard]] constexpr std::uint64_t make_live(std::uint32_t gen) noexcept {
  return gen | (kModeLive << kModeShift);
}
// Live, with slot 0 Live and every other slot Empty: a claimed node made Live.
[[nodiscard]] constexpr std::uint64_t make_live_one(std::uint32_t gen) noexcept {
  return make_live(gen) | (std::uint64_t{kSlotLive} << kSlotShift);
}
// The next generation, skipping 0 (a packed reference of 0 means "none").
[[nodiscard]] constexpr std::uint32_t next_generation(std::uint32_t gen) noexcept {
  return gen == 0xFFFF'FFFFU ? 1U : gen + 1;
}
// A state word that no correct process writes.
[[nodiscard]] constexpr bool well_formed(std::uint64_t s) noexcept {
  if ((s & kTopMask) != 0 || generation(s) == 0) return false;
  switch (mode(s)) {
    case kModeFree:
      return slot_field(s) == 0;
    case kModeClaimed:
      return (slot_field(s) >> 16) == 0 && claimer(s) != 0;
    case kModeLive:
      return slots_valid(s);
    default:
      return false;
  }
}
}  // namespace state

// ---------------------------------------------------------------------------
// Holder word (one per holder slot; meaningful only while the slot is Live in
// the state word):
//   bits  0..15  owner: whose references these are (never 0 while open)
//   bits 16..31  aux: open: the giver of the pending references (0: none);
//                closed: the party finishing the close (the "vacater")
//   bits 32..43  held: references the owner holds (its loan, samples it took, extra add_refs)
//   bits 44..55  pending: references given to the owner and not yet accepted
//                (in its queue, or being pushed there)
//   bits 56..62  tag: bumped each time the slot is reserved (ABA guard)
//   bit  63      closed: counts are 0, the slot is being vacated
namespace holder {
struct Fields {
  std::uint16_t owner = 0;
  std::uint16_t aux = 0;
  std::uint32_t held = 0;
  std::uint32_t pending = 0;
  std::uint32_t tag = 0;
  bool closed = false;
};
inline constexpr std::uint64_t kCountMask = 0xFFF;
inline constexpr std::uint64_t kTagMask = 0x7F;
[[nodiscard]] constexpr std::uint64_t encode(const Fields& f) noexcept {
  return std::uint64_t{f.owner} | (std::uint64_t{f.aux} << 16) | ((f.held & kCountMask) << 32) |
         ((f.pending & kCountMask) << 44) | ((f.tag & kTagMask) << 56) |
         (std::uint64_t{f.closed} << 63);
}
[[nodiscard]] constexpr Fields decode(std::uint64_t w) noexcept {
  Fields f;
  f.owner = static_cast<std::uint16_t>(w & 0xFFFF);
  f.aux = static_cast<std::uint16_t>((w >> 16) & 0xFFFF);
  f.held = static_cast<std::uint32_t>((w >> 32) & kCountMask);
  f.pending = static_cast<std::uint32_t>((w >> 44) & kCountMask);
  f.tag = static_cast<std::uint32_t>((w >> 56) & kTagMask);
  f.closed = (w >> 63) != 0;
  return f;
}
// An open holder word that no correct process writes.
[[nodiscard]] constexpr bool open_well_formed(const Fields& f) noexcept {
  return f.owner != 0 && f.held + f.pending >= 1 && f.held + f.pending <= kMaxRefsPerHolder &&
         (f.pending == 0 || f.aux != 0);
}
static_assert(kMaxRefsPerHolder <= kCountMask);
// The tag of any slot word (holder or link): the same bits in both.
[[nodiscard]] constexpr std::uint32_t tag_of(std::uint64_t w) noexcept {
  return static_cast<std::uint32_t>((w >> 56) & kTagMask);
}
[[nodiscard]] constexpr std::uint64_t with_tag(std::uint64_t w, std::uint32_t tag) noexcept {
  return (w & ~(kTagMask << 56)) | (std::uint64_t{tag & kTagMask} << 56);
}
}  // namespace holder

// ---------------------------------------------------------------------------
// Link word (slot 13 of a holder node; meaningful only while that slot is
// Live or Reserving in the node's state word): the next node of the chain.
//   open:    bits  0..31  the next node's generation (never 0)
//            bits 32..55  the next node's index in the node area
//   closed:  bits 16..31  the party finishing the close (as a holder word's aux)
//   bits 56..62  tag: bumped each time the slot is reserved (ABA guard)
//   bit  63      closed: the next node is Free, the slot is being vacated
namespace link {
[[nodiscard]] constexpr std::uint64_t make(std::uint32_t index, std::uint32_t gen,
                                           std::uint32_t tag) noexcept {
  return std::uint64_t{gen} | (std::uint64_t{index & 0xFF'FFFFU} << 32) |
         (std::uint64_t{tag & holder::kTagMask} << 56);
}
[[nodiscard]] constexpr bool closed(std::uint64_t w) noexcept { return (w >> 63) != 0; }
[[nodiscard]] constexpr std::uint32_t index(std::uint64_t w) noexcept {
  return static_cast<std::uint32_t>((w >> 32) & 0xFF'FFFFU);
}
[[nodiscard]] constexpr std::uint32_t generation(std::uint64_t w) noexcept {
  return static_cast<std::uint32_t>(w & 0xFFFF'FFFFU);
}
[[nodiscard]] constexpr std::uint16_t closer(std::uint64_t w) noexcept {
  return static_cast<std::uint16_t>((w >> 16) & 0xFFFF);
}
// The link word `w` closed by `closer`: the tag stays.
[[nodiscard]] constexpr std::uint64_t close(std::uint64_t w, std::uint16_t closer) noexcept {
  return (w & (holder::kTagMask << 56)) | (std::uint64_t{closer} << 16) | (std::uint64_t{1} << 63);
}
// An open link with bits no correct process writes (generation 0).
[[nodiscard]] constexpr bool open_well_formed(std::uint64_t w) noexcept {
  return !closed(w) && generation(w) != 0;
}
}  // namespace link

}  // namespace pool_layout
}  // namespace ferry::transport
