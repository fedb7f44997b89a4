#include "history.hpp"

#include <cstring>

#include "domain_pool_view.hpp"

namespace ferry::detail {

namespace {
// stamp; length | flags << 32; the sample's metadata (SlotMeta, 3 words)
constexpr std::size_t kHeaderWords = 5;
constexpr std::uint64_t complete_stamp(std::uint64_t seq) noexcept { return 2 * (seq + 1); }
}  // namespace

History::History(std::uint32_t depth, std::uint32_t entry_bytes)
    : depth_(depth),
      payload_words_((entry_bytes + 7) / 8),
      stride_(kHeaderWords + payload_words_),
      words_(depth == 0 ? nullptr : new std::atomic<std::uint64_t>[depth * stride_]) {
  for (std::size_t i = 0; i < depth_ * stride_; ++i) {
    words_[i].store(0, std::memory_order_relaxed);  // SYNC: relaxed; before any sharing
  }
}

std::uint64_t History::pooled_ref_of(std::uint32_t index) const noexcept {
  const std::atomic<std::uint64_t>* e = &words_[index * stride_];
  // SYNC: relaxed; the writer's own thread (or nobody any more) calls this.
  if (e[0].load(std::memory_order_relaxed) == 0) return 0;  // never written
  if ((e[1].load(std::memory_order_relaxed) >> 32) != kSlotPooled) return 0;
  return e[kHeaderWords].load(std::memory_order_relaxed);  // PooledSlot::ref, the first word
}

std::uint64_t History::record(std::span<const std::byte> bytes, std::uint32_t flags,
                              const transport::SlotMeta& meta) noexcept {
  if (depth_ == 0) return 0;
  // SYNC: relaxed; only this thread writes recorded_.
  const std::uint64_t seq = recorded_.load(std::memory_order_relaxed);
  std::atomic<std::uint64_t>* e = entry(seq);
  const std::uint64_t evicted = pooled_ref_of(static_cast<std::uint32_t>(seq % depth_));
  // SYNC: relaxed store of an odd stamp, then a release fence: a reader that
  // sees any of the payload words below also sees the odd stamp on its
  // second load (pairs with the reader's acquire fence), so it discards the
  // copy.
  e[0].store(complete_stamp(seq) - 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const std::size_t size = std::min(bytes.size(), std::size_t{payload_words_} * 8);
  e[1].store(size | (std::uint64_t{flags} << 32), std::memory_order_relaxed);
  e[2].store(meta.sequence, std::memory_order_relaxed);
  e[3].store(meta.publisher_id, std::memory_order_relaxed);
  e[4].store(meta.publish_time_ns, std::memory_order_relaxed);
  for (std::size_t w = 0; w * 8 < size; ++w) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + w * 8, std::min<std::size_t>(8, size - w * 8));
    e[kHeaderWords + w].store(word, std::memory_order_relaxed);
  }
  // SYNC: release, pairs with the reader's acquire load of the stamp: the
  // payload is complete before the stamp says so.
  e[0].store(complete_stamp(seq), std::memory_order_release);
  // SYNC: release, pairs with the acquire load in recorded().
  recorded_.store(seq + 1, std::memory_order_release);
  return evicted;
}

bool History::read(std::uint64_t seq, std::span<std::byte> out, std::uint32_t& length,
                   std::uint32_t& flags, transport::SlotMeta& meta) const noexcept {
  if (depth_ == 0) return false;
  const std::atomic<std::uint64_t>* e = entry(seq);
  // SYNC: acquire, pairs with the writer's release store of the stamp.
  const std::uint64_t stamp = e[0].load(std::memory_order_acquire);
  if (stamp != complete_stamp(seq)) return false;  // gone, or being rewritten
  // SYNC: relaxed loads, validated by the stamp check below.
  const std::uint64_t header = e[1].load(std::memory_order_relaxed);
  const std::size_t size = static_cast<std::uint32_t>(header);
  if (size > out.size()) return false;
  const transport::SlotMeta copied{e[2].load(std::memory_order_relaxed),
                                   e[3].load(std::memory_order_relaxed),
                                   e[4].load(std::memory_order_relaxed)};
  for (std::size_t w = 0; w * 8 < size; ++w) {
    const std::uint64_t word = e[kHeaderWords + w].load(std::memory_order_relaxed);
    std::memcpy(out.data() + w * 8, &word, std::min<std::size_t>(8, size - w * 8));
  }
  // SYNC: acquire fence, pairs with the writer's release fence after its odd
  // stamp: if any word above came from a rewrite, the load below sees the
  // rewrite's stamp.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (e[0].load(std::memory_order_relaxed) != stamp) return false;
  length = static_cast<std::uint32_t>(size);
  flags = static_cast<std::uint32_t>(header >> 32);
  meta = copied;
  return true;
}

}  // namespace ferry::detail
