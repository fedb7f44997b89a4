#pragma once
// Buffers for the samples a subscriber has taken and not yet released, at
// most max_held of them. Inline samples are copied out of the ring into one of
// these buffers, so the ring slot is free at once and the sample stays valid
// until its Sample handle dies.
//
// The user's thread acquires buffers; a Sample may be released from any
// thread, even after its Subscriber is gone: the object then frees itself on
// the last release.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "domain_pool_view.hpp"

namespace ferry::detail {

class HeldSamples {
 public:
  static constexpr std::uint32_t kMaxBuffers = 63;  // one bit each, one bit for "closed"

  // Heap-allocates `count` buffers of `buffer_size` bytes, 64-byte aligned.
  // `pool` (may be null) is where pooled samples' references are released.
  static HeldSamples* create(std::uint32_t count, std::size_t buffer_size,
                             std::shared_ptr<DomainPoolView> pool);

  // Takes a free buffer; false when all `count` are held. Owner thread only.
  bool acquire(std::uint32_t& token, std::byte*& buffer) noexcept;
  // Gives back a buffer that acquire handed out but that was not filled.
  void unacquire(std::uint32_t token) noexcept { release(token); }
  // The held sample is a pool chunk (ChunkRef::pack()): release drops the
  // node's reference to it. Owner thread, between acquire and handing out.
  void hold_chunk(std::uint32_t token, std::uint64_t ref) noexcept {
    // SYNC: relaxed; published to a releasing thread with the Sample handle,
    // and read back by release() on the thread that got that handle.
    chunks_[token].store(ref, std::memory_order_relaxed);
  }
  // Any thread. May delete this when the owner has closed it.
  void release(std::uint32_t token) noexcept;
  // The owner is gone; frees now if nothing is held, else on the last release.
  void close() noexcept;

  [[nodiscard]] std::uint32_t held_count() const noexcept;
  [[nodiscard]] std::uint32_t capacity() const noexcept { return count_; }

 private:
  HeldSamples(std::uint32_t count, std::size_t buffer_size, std::byte* storage,
              std::shared_ptr<DomainPoolView> pool) noexcept;
  ~HeldSamples();
  void finish_if_done(std::uint64_t state_after) noexcept;

  static constexpr std::uint64_t kClosedBit = std::uint64_t{1} << 63;

  const std::uint32_t count_;
  const std::size_t buffer_size_;  // rounded up to 64
  std::byte* const storage_;
  const std::uint64_t all_free_;
  std::shared_ptr<DomainPoolView> pool_;
  std::atomic<std::uint64_t> chunks_[kMaxBuffers]{};  // pooled sample per token, 0: none
  // Bit i set: buffer i is free. Bit 63: the owner closed us.
  std::atomic<std::uint64_t> state_;
};

}  // namespace ferry::detail
