#pragma once
// What a ring slot carries, for everyone who writes, sizes or inspects slots
// (core's ports, ferryd's registry, `ferry pool`, the benchmarks): one
// definition, instead of each restating the numbers.
//
//   slot:  {u32 length, u32 flags} | SlotMeta (3 x u64) | payload
//          '----------------- kSlotHeader ------------'
//
// The ring itself is blind to `flags`; ferry's ports give them one of the
// meanings below. A pooled slot's payload is a PooledSlot: the sample lives
// in a pool chunk and the slot carries the reference.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

#include "ferry/transport/platform.hpp"
#include "ferry/transport/ring_layout.hpp"

namespace ferry::transport {

// Bytes before a slot's payload: {length, flags} and the sample's SlotMeta.
inline constexpr auto kSlotHeader = static_cast<std::uint32_t>(ring_layout::kSlotHeaderBytes);

// A pooled slot's payload.
struct PooledSlot {
  std::uint64_t ref;   // ChunkRef::pack()
  std::uint64_t size;  // bytes of the sample inside the chunk
};
inline constexpr auto kPooledSlotBytes = static_cast<std::uint32_t>(sizeof(PooledSlot));

// A slot's payload read as a PooledSlot: the one decode that every reader of
// a pooled slot uses (a subscriber's take, take_many, the history handed to a
// late joiner, a departing publisher, drop_oldest's discard, `ferry pool`).
// Nothing unless `flags` says pooled and the payload has exactly a
// PooledSlot's size: a broken or hostile peer's slot is refused, never overread.
[[nodiscard]] inline std::optional<PooledSlot> read_pooled(std::span<const std::byte> payload,
                                                           std::uint32_t flags) noexcept {
  if (flags != kSlotPooled || payload.size() != sizeof(PooledSlot)) return std::nullopt;
  PooledSlot pooled;
  std::memcpy(&pooled, payload.data(), sizeof pooled);
  return pooled;
}

// How much of a bytes topic's sample travels inline, copied into the slot:
// its slots have room for this (four cache lines with the header), so a
// short message (a log line, a command) costs its reader the slot's lines
// and no pool chunk; longer ones travel as a PooledSlot in the first line.
inline constexpr std::uint32_t kBytesInlineMax = 224;

// Bytes of a slot whose payload holds `payload` bytes: header and payload in
// whole cache lines, so that consecutive slots never share a line.
[[nodiscard]] constexpr std::uint32_t slot_size_for_payload(std::uint64_t payload) noexcept {
  return static_cast<std::uint32_t>((kSlotHeader + payload + kCacheLine - 1) / kCacheLine *
                                    kCacheLine);
}

static_assert(kSlotHeader == sizeof(ring_layout::SlotHeader) + sizeof(SlotMeta));
static_assert(kSlotHeader == 32 && kSlotHeader % 8 == 0, "the payload stays 8-byte aligned");
static_assert(kSlotInline != kSlotPooled);
static_assert(sizeof(PooledSlot) == 16 && alignof(PooledSlot) == 8);
// core's history reads PooledSlot::ref as the payload's first word.
static_assert(offsetof(PooledSlot, ref) == 0 && offsetof(PooledSlot, size) == 8);
static_assert(std::is_trivially_copyable_v<PooledSlot>);
static_assert(slot_size_for_payload(kPooledSlotBytes) == 64);
static_assert(slot_size_for_payload(kPooledSlotBytes) >= ring_layout::kMinSlotSize,
              "a slot sized for a pool reference is a valid ring slot");
static_assert(slot_size_for_payload(33) == 128);
static_assert(slot_size_for_payload(kBytesInlineMax) == 4 * kCacheLine);

}  // namespace ferry::transport
