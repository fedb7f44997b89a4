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

namespace ferry::detail {

class HeldSamples {
 public:
  static constexpr std::uint32_t kMaxBuffers = 63;  // one bit each, one bit for "closed"

  // Heap-allocates `count` buffers of `buffer_size` bytes, 64-byte aligned.
  static HeldSamples* create(std::uint32_t count, std::size_t buffer_size);

  // Takes a free buffer; false when all `count` are held. Owner thread only.
  bool acquire(std::uint32_t& token, std::byte*& buffer) noexcept;
  // Gives back a buffer that acquire handed out but that was not filled.
  void unacquire(std::uint32_t token) noexcept { release(token); }
  // Any thread. May delete this when the owner has closed it.
  void release(std::uint32_t token) noexcept;
  // The owner is gone; frees now if nothing is held, else on the last release.
  void close() noexcept;

  [[nodiscard]] std::uint32_t held_count() const noexcept;
  [[nodiscard]] std::uint32_t capacity() const noexcept { return count_; }

 private:
  HeldSamples(std::uint32_t count, std::size_t buffer_size, std::byte* storage) noexcept;
  ~HeldSamples();
  void finish_if_done(std::uint64_t state_after) noexcept;

  static constexpr std::uint64_t kClosedBit = std::uint64_t{1} << 63;

  const std::uint32_t count_;
  const std::size_t buffer_size_;  // rounded up to 64
  std::byte* const storage_;
  const std::uint64_t all_free_;
  // Bit i set: buffer i is free. Bit 63: the owner closed us.
  std::atomic<std::uint64_t> state_;
};

}  // namespace ferry::detail
