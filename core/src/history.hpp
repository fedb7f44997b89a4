#pragma once
// A publisher's last `depth` published samples (a topic's `history:`), kept
// as the ring slot bytes they were pushed as: the inline sample itself, or a
// pool reference (PooledSlot) that the history holds as the publisher's
// node, so the chunk stays alive for subscribers that join later.
//
// Each entry also keeps the sample's metadata (sequence, publisher, publish
// time), so a late subscriber gets the original values.
//
// Written by the user's thread after every publish; read by the node's
// runtime thread, which hands the history to a new subscriber's queue the
// moment it matches (a publisher that published once, long ago, still
// serves a late joiner). Each entry is a seqlock: the writer makes its stamp
// odd, writes, then stamps it 2 * (seq + 1); a reader copies the words and
// keeps the copy only if the stamp it read before is still there after. No
// lock, no allocation after construction; payload words are relaxed atomics
// so that a torn read is a detected retry, never a data race.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "ferry/transport/ring_layout.hpp"

namespace ferry::detail {

class History {
 public:
  // depth 0: no history (every call is a no-op). entry_bytes: the largest
  // slot payload (the ring's inline limit).
  History(std::uint32_t depth, std::uint32_t entry_bytes);
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  [[nodiscard]] std::uint32_t depth() const noexcept { return depth_; }
  [[nodiscard]] bool enabled() const noexcept { return depth_ != 0; }

  // Samples recorded so far; entries [recorded - depth, recorded) exist.
  [[nodiscard]] std::uint64_t recorded() const noexcept {
    // SYNC: acquire, pairs with the release store in record(): the entry of
    // every sequence number below the value is stamped (or being rewritten,
    // which the entry's own stamp tells).
    return recorded_.load(std::memory_order_acquire);
  }

  // User's thread. Records the slot bytes of a published sample (a pooled
  // one's reference now belongs to the history). Returns the pool reference
  // of the pooled entry it replaced, for the caller to release, or 0.
  std::uint64_t record(std::span<const std::byte> bytes, std::uint32_t flags,
                       const transport::SlotMeta& meta) noexcept;

  // Any thread. Copies entry `seq` into `out` (at least entry_bytes long).
  // False when it is gone (overwritten) or was being rewritten.
  bool read(std::uint64_t seq, std::span<std::byte> out, std::uint32_t& length,
            std::uint32_t& flags, transport::SlotMeta& meta) const noexcept;

  // The pool references the history holds, for releasing them all when the
  // publisher goes (only when no other thread uses the history any more).
  template <class F>
  void for_each_pooled(F&& f) const noexcept {
    for (std::uint32_t i = 0; i < depth_; ++i) {
      if (const std::uint64_t ref = pooled_ref_of(i); ref != 0) f(ref);
    }
  }

 private:
  // Entry i is words [i * stride_, (i + 1) * stride_): its stamp, then
  // length | flags << 32, the metadata (3 words), then the payload.
  [[nodiscard]] std::atomic<std::uint64_t>* entry(std::uint64_t seq) const noexcept {
    return &words_[(seq % depth_) * stride_];
  }
  [[nodiscard]] std::uint64_t pooled_ref_of(std::uint32_t index) const noexcept;

  const std::uint32_t depth_;
  const std::uint32_t payload_words_;
  const std::size_t stride_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> words_;
  std::atomic<std::uint64_t> recorded_{0};
};

}  // namespace ferry::detail
