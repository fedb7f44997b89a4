// The overwrite protocol's consumer side (see ring_overwrite.hpp for the
// producer's).
#include <algorithm>
#include <cstring>

#include "ferry/transport/ring.hpp"

namespace ferry::transport {

// How a producer writes a message into an overwrite ring's slot (the
// producer's write_slot): a consumer may still be copying this slot
// speculatively (its CAS will fail), so word-sized atomic stores, and there
// is no data race.
void detail::write_overwrite_slot(std::byte* slot, std::span<const std::byte> msg,
                                  std::uint32_t flags, const SlotMeta& meta) noexcept {
  const auto length = static_cast<std::uint32_t>(msg.size());
  store_word(slot, pack_header(length, flags));
  store_meta(slot, meta);
  std::byte* payload = slot + ring_layout::kSlotHeaderBytes;
  std::size_t off = 0;
  for (; off + 8 <= length; off += 8) {
    std::uint64_t w;
    std::memcpy(&w, msg.data() + off, 8);
    store_word(payload + off, w);
  }
  if (off < length) {
    std::uint64_t w = 0;
    std::memcpy(&w, msg.data() + off, length - off);
    store_word(payload + off, w);
  }
}

// Overwrite mode. Why a successful CAS means the copy is not torn:
//  - The producer rewrites the slot of index h (for message h + capacity)
//    only after it observed head > h: by winning its own discard CAS on h, or
//    by reading (acquire: its CAS failure or head load) a head value at or
//    after our successful CAS h -> h + 1.
//  - If our CAS h -> h + 1 succeeds, the producer's discard CAS on h cannot
//    also succeed (both expect h). So it observed head > h through our CAS,
//    which is a release (acq_rel) RMW sequenced after our copy: our copy
//    happens before the producer's rewrite, and a load never reads a store
//    that it happens before. The copy holds message h only (it also cannot
//    see an older message: our acquire load of tail > h synchronised with
//    the release store that published h).
//  - If the producer won instead, our CAS fails and the copy is thrown away.
// All slot words are accessed with std::atomic_ref, so the speculative copy
// racing the rewrite is not a data race (no UB, TSan-clean).
std::expected<std::uint32_t, RingError> RingConsumer::try_pop_overwrite(std::span<std::byte> out,
                                                                        std::uint32_t* flags,
                                                                        SlotMeta* meta) noexcept {
  if (broken_) [[unlikely]]
    return std::unexpected(RingError::CorruptIndices);
  auto& head = header_->consumer.head;
  bool head_past_tail = false;
  for (std::uint32_t attempt = 0; attempt < kMaxClaimRetries; ++attempt) {
    // Tail before head: head only grows, and tail - head <= capacity holds
    // at every instant, so with this order t - h <= capacity unless the
    // memory is corrupt, or h > t because the producer moved on meanwhile.
    // SYNC: acquire, pairs with the producer's release store of tail: the
    // slots before it are written.
    const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
    // SYNC: acquire, pairs with the producer's acq_rel discard CAS.
    std::uint32_t h = head.load(std::memory_order_acquire);
    const auto distance = static_cast<std::int32_t>(t - h);
    if (distance == 0) return std::unexpected(RingError::Empty);
    head_past_tail = distance < 0;
    if (head_past_tail) continue;  // stale tail: read both again
    if (static_cast<std::uint32_t>(distance) > capacity_) {
      // More than a capacity apart: no producer and consumer get there.
      mark_broken();
      return std::unexpected(RingError::CorruptIndices);
    }
    const std::byte* slot = slot_at(h);
    const ring_layout::SlotHeader hdr = detail::unpack_header(detail::load_word(slot));
    if (hdr.length > payload_max_ || hdr.length > out.size()) {
      // We act on this header without taking the message, so first make
      // sure it was message h's and not a rewrite in progress (seqlock-style).
      // SYNC: acquire fence, pairs with the release fence after the
      // producer's discard CAS: if our header load read a rewrite, the head
      // load below sees the CAS.
      std::atomic_thread_fence(std::memory_order_acquire);
      // SYNC: relaxed; ordered by the fence above.
      if (head.load(std::memory_order_relaxed) != h) continue;
      if (hdr.length <= payload_max_) return std::unexpected(RingError::BufferTooSmall);
      // Impossible length: skip the slot by taking it.
      // SYNC: acq_rel, as the taking CAS below.
      if (head.compare_exchange_strong(h, h + 1, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        count_corrupt();
        doorbell_notify(header_->space_bell);
        return std::unexpected(RingError::CorruptSlot);
      }
      continue;
    }
    // Speculative copy, word by word (atomic loads; the slot payload is
    // 8-aligned and a multiple of 8 long, so whole words stay inside it).
    const std::byte* payload = slot + ring_layout::kSlotHeaderBytes;
    const std::uint32_t length = hdr.length;
    for (std::uint32_t off = 0; off < length; off += 8) {
      const std::uint64_t w = detail::load_word(payload + off);
      std::memcpy(out.data() + off, &w, std::min<std::uint32_t>(8, length - off));
    }
    const SlotMeta copied_meta = detail::load_meta(slot);
    // SYNC: acq_rel on success: release pairs with the producer's acquire
    // (failed discard CAS or head load) so our copy happens before it reuses
    // the slot (see above). Relaxed on failure: the copy is discarded.
    if (head.compare_exchange_strong(h, h + 1, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      if (flags != nullptr) *flags = hdr.flags;
      if (meta != nullptr) *meta = copied_meta;
      count_popped();
      doorbell_notify(header_->space_bell);
      return length;
    }
    // The producer discarded message h while we copied it: try the next one.
  }
  return std::unexpected(head_past_tail ? RingError::CorruptIndices : RingError::Contended);
}

}  // namespace ferry::transport
