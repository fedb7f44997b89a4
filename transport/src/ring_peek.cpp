#include "ferry/transport/ring_peek.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "ferry/transport/ring.hpp"

namespace ferry::transport {

std::vector<PeekedMessage> peek_ring(const void* mem, std::size_t bytes, std::size_t max_prefix) {
  std::vector<PeekedMessage> out;
  // attach_ring only reads the header (the handle it fills is not used to write).
  auto a = detail::attach_ring(const_cast<void*>(mem), bytes);
  if (!a) return out;
  const auto& header = *a->header;
  // SYNC: acquire, pairs with the producer's release store of tail: the
  // slots below tail are written.
  const std::uint32_t tail = header.producer.tail.load(std::memory_order_acquire);
  // SYNC: acquire: a snapshot; the re-read below decides what was intact.
  const std::uint32_t head = header.consumer.head.load(std::memory_order_acquire);
  const std::uint32_t queued = tail - head;
  if (queued > a->capacity) return out;  // a torn pair of indices (or a broken peer)
  const std::uint32_t payload_max =
      a->slot_size - static_cast<std::uint32_t>(ring_layout::kSlotHeaderBytes);
  const std::uint32_t words = static_cast<std::uint32_t>(
      (std::min<std::size_t>(max_prefix, payload_max) + sizeof(std::uint64_t) - 1) /
      sizeof(std::uint64_t));
  std::vector<std::uint64_t> copy(words);
  std::vector<std::uint32_t> index;  // of each message in `out`
  out.reserve(queued);
  for (std::uint32_t k = 0; k < queued; ++k) {
    const std::byte* slot = a->slots + std::size_t{(head + k) & a->mask} * a->slot_size;
    // Word loads (atomic_ref): the producer may be rewriting a slot the
    // consumer just freed; such a copy is thrown away below.
    const auto h = detail::unpack_header(detail::load_word(slot));
    const SlotMeta meta = detail::load_meta(slot);
    for (std::uint32_t w = 0; w < words; ++w) {
      copy[w] = detail::load_word(slot + ring_layout::kSlotHeaderBytes + w * sizeof(std::uint64_t));
    }
    if (h.length > payload_max) continue;  // torn or corrupt: the consumer skips it too
    PeekedMessage m;
    m.flags = h.flags;
    m.length = h.length;
    m.meta = meta;
    m.prefix.resize(
        std::min<std::size_t>({max_prefix, h.length, std::size_t{words} * sizeof(std::uint64_t)}));
    std::memcpy(m.prefix.data(), copy.data(), m.prefix.size());
    out.push_back(std::move(m));
    index.push_back(head + k);
  }
  // SYNC: acquire fence, then head: the slot loads above happen before this
  // read, so a message whose slot could have been reused meanwhile (its
  // index is now below head) is seen as such and dropped.
  std::atomic_thread_fence(std::memory_order_acquire);
  const std::uint32_t head_after = header.consumer.head.load(std::memory_order_relaxed);
  const std::uint32_t gone = head_after - head;  // free-running: the messages taken meanwhile
  std::size_t taken = 0;
  while (taken < out.size() && index[taken] - head < gone) ++taken;
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(taken));
  return out;
}

}  // namespace ferry::transport
