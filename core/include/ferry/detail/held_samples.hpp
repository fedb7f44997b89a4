#pragma once
// Buffers for the samples a subscriber has taken and not yet released, at
// most max_held of them; inline samples are copied into one. A public detail
// header because take() and a Sample's release are inlined into the caller
// (ports.hpp). How acquire, release and the object's lifetime work:
// held_samples.cpp.

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ferry/sample_info.hpp"
#include "ferry/transport/platform.hpp"        // FERRY_HOT
#include "ferry/transport/ring_fast_path.hpp"  // SlotMeta

namespace ferry::detail {

struct DomainPoolView;  // core/src: the node's pool mapping

class HeldSamples {
 public:
  // config::kMaxHeld (static_assert in held_samples.cpp); one bit of free_ each.
  static constexpr std::uint32_t kMaxBuffers = 63;

  // Heap-allocates `count` buffers of `buffer_size` bytes, 64-byte aligned.
  // `pool` (may be null) is where pooled samples' references are released.
  static HeldSamples* create(std::uint32_t count, std::size_t buffer_size,
                             std::shared_ptr<DomainPoolView> pool);

  // Takes a free buffer; false when all `count` are held. Owner thread only.
  FERRY_HOT bool acquire(std::uint32_t& token, std::byte*& buffer) noexcept {
    if (free_ == 0 && !collect()) return false;
    const auto index = static_cast<std::uint32_t>(std::countr_zero(free_));
    free_ &= free_ - 1;
    token = index;
    buffer = storage_ + std::size_t{index} * buffer_size_;
    return true;
  }
  // Gives back a buffer that acquire handed out but that was not filled.
  // Owner thread only.
  void unacquire(std::uint32_t token) noexcept { free_ |= std::uint64_t{1} << token; }
  // The held sample is a pool chunk (ChunkRef::pack()). Owner thread.
  void hold_chunk(std::uint32_t token, std::uint64_t ref) noexcept;
  // Any thread, once per acquired token. The object may be deleted by
  // another thread as soon as this returns.
  FERRY_HOT void release(std::uint32_t token) noexcept {
    if (token >= count_) return;
    // SYNC: relaxed, pairs with the relaxed store in hold_chunk(): the
    // reference travels with the Sample handle (held_samples.cpp).
    if (chunks_[token].load(std::memory_order_relaxed) != 0) release_chunk(token);
    // SYNC: release, pairs with the acquire loads in collect() and
    // all_released(): our reads of the buffer (and the chunk bookkeeping)
    // happen before the owner reuses it or a sweep deletes us. This store is
    // our last access to the object.
    released_[token].store(1, std::memory_order_release);
  }
  // The owner is gone: deletes now if nothing is held, else later
  // (held_samples.cpp).
  // On the owner's thread, or after it (its last acquire happens before).
  void close() noexcept;

  // The metadata of the sample held under `token`: written by the owner's
  // take (before the Sample exists), read through the Sample by whichever
  // thread holds it, unchanged until the token is released.
  [[nodiscard]] transport::SlotMeta& info(std::uint32_t token) noexcept { return infos_[token]; }
  // The same, as the public SampleInfo (a copy of three words).
  [[nodiscard]] SampleInfo sample_info(std::uint32_t token) const noexcept {
    const transport::SlotMeta& meta = infos_[token];
    return SampleInfo{meta.sequence, meta.publisher_id, meta.publish_time_ns};
  }

  // Owner thread (a statistic).
  [[nodiscard]] std::uint32_t held_count() const noexcept;
  // Owner thread: whether a sample still held (acquired, not released)
  // came from publisher `publisher_id`. Off the hot path.
  [[nodiscard]] bool holds_from(std::uint64_t publisher_id) const noexcept;
  [[nodiscard]] std::uint32_t capacity() const noexcept { return count_; }

 private:
  friend struct ClosedHeldSamples;
  HeldSamples(std::uint32_t count, std::size_t buffer_size, std::byte* storage,
              std::shared_ptr<DomainPoolView> pool) noexcept;
  ~HeldSamples();
  // Owner thread: moves the buffers released since the last call into free_.
  bool collect() noexcept;
  // Drops the node's reference to token's pool chunk.
  void release_chunk(std::uint32_t token) noexcept;
  // Closed, or about to be: is every buffer back?
  [[nodiscard]] bool all_released() const noexcept;

  const std::uint32_t count_;
  const std::size_t buffer_size_;  // rounded up to 64
  std::byte* const storage_;
  std::shared_ptr<DomainPoolView> pool_;
  std::atomic<std::uint64_t> chunks_[kMaxBuffers]{};  // pooled sample per token, 0: none
  transport::SlotMeta infos_[kMaxBuffers]{};          // per token: the held sample's metadata
  // Every buffer is in exactly one of: free_ (free, the owner knows it),
  // released (its flag is 1, not yet collected), or held by a Sample.
  std::uint64_t free_;  // owner thread only; bit i: buffer i is free
  // 1: buffer i was released (by any thread) and not yet collected. Written
  // 1 by the releaser, 0 by the owner when it collects; never both at once
  // (the buffer goes back to a releaser only through a new Sample).
  std::atomic<std::uint8_t> released_[kMaxBuffers]{};
};

}  // namespace ferry::detail
