#pragma once
// A byte ring whose space one thread takes in order and another gives back
// in the same order: ferry record's taking thread copies small samples into
// it (so their queue slots and pool chunks are free at once) and its writer
// thread gives the space back once each is written (recorder.hpp).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace ferry::cli {

class CopyArena {
 public:
  // Pieces are 64-byte aligned (as a sample in a pool chunk is).
  static constexpr std::size_t kAlign = 64;

  // `bytes` (a multiple of kAlign), allocated now and touched only as used.
  explicit CopyArena(std::size_t bytes)
      : bytes_(static_cast<std::byte*>(::operator new (bytes, std::align_val_t{kAlign}))),
        size_(bytes) {}

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  // Producer: `size` contiguous bytes, or nullptr while too little was given
  // back. `end` is what to give back to once the piece is done with.
  [[nodiscard]] std::byte* allocate(std::size_t size, std::uint64_t& end) noexcept {
    size = (size + kAlign - 1) / kAlign * kAlign;
    if (size == 0 || size > size_) return nullptr;
    std::uint64_t start = tail_;
    const std::size_t offset = static_cast<std::size_t>(start % size_);
    if (size_ - offset < size) start += size_ - offset;  // not across the end: skip it
    // SYNC: acquire, pairs with the release store in give_back(): the
    // consumer is done reading the space before we write it again.
    if (start + size - head_.load(std::memory_order_acquire) > size_) return nullptr;
    tail_ = start + size;
    end = tail_;
    return bytes_.get() + static_cast<std::size_t>(start % size_);
  }

  // Consumer: every piece allocated up to `end` (an allocate()'s) is done
  // with, in allocation order.
  void give_back(std::uint64_t end) noexcept {
    // SYNC: release, pairs with the acquire load in allocate().
    head_.store(end, std::memory_order_release);
  }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept {
      ::operator delete (p, std::align_val_t{kAlign});
    }
  };
  std::unique_ptr<std::byte, Free> bytes_;
  const std::size_t size_;
  std::uint64_t tail_ = 0;              // producer only: the next free byte
  std::atomic<std::uint64_t> head_{0};  // the first byte still in use
};

}  // namespace ferry::cli
