#pragma once
// The ferry_sample_t handles of one subscriber: one slot per sample it may
// hold (at most config::kMaxHeld, 63), preallocated, so ferry_take()
// allocates nothing.
//
// A slot is taken by the subscriber's thread and released by any thread,
// even after the subscriber is destroyed, as a C++ Sample may be. That is
// HeldSamples' scheme (core/include/ferry/detail/held_samples.hpp), one
// level up: the owner keeps the slots it knows free in a private mask; a
// release is one release-store of the slot's state (its last access to the
// slots); the owner collects released slots only when its mask is empty.
// The block outlives its subscriber while a slot is held: a destroyed
// subscriber's block waits in a process-wide list, swept when subscribers
// are created or destroyed.

#include <atomic>
#include <cstdint>
#include <optional>

#include "ferry/ferry.h"
#include "ferry/raw.hpp"

struct ferry_sample_s {
  enum State : std::uint8_t { Free = 0, Held = 1, Released = 2 };
  // Written by the owner before the handle is handed out; read by whichever
  // thread holds the handle; moved out by the release.
  std::optional<ferry::RawSample> sample;
  const void* data = nullptr;
  std::size_t size = 0;
  // Free -> Held (owner, take), Held -> Released (any thread, release),
  // Released -> Free (owner, collect).
  std::atomic<std::uint8_t> state{Free};
};

namespace ferry::c {

class SampleSlots {
 public:
  static constexpr std::uint32_t kSlots = 63;  // config::kMaxHeld (HeldSamples::kMaxBuffers)

  // A slot for `taken` (owner thread). Null never happens while the
  // subscriber holds at most kSlots samples and each slot is released before
  // its sample is (then `taken` is released when the caller drops it).
  FERRY_HOT ferry_sample_t* hold(RawSample&& taken) noexcept {
    if (free_ == 0) [[unlikely]] {
      collect();
      if (free_ == 0) return nullptr;
    }
    const auto index = static_cast<std::uint32_t>(std::countr_zero(free_));
    free_ &= free_ - 1;
    ferry_sample_t& slot = slots_[index];
    slot.data = taken.data();
    slot.size = taken.size();
    slot.sample.emplace(std::move(taken));
    // SYNC: relaxed; the handle reaches another thread only through the
    // user's own synchronisation, which orders this store before its release.
    slot.state.store(ferry_sample_t::Held, std::memory_order_relaxed);
    return &slot;
  }
  // Any thread. False when the slot is not held (released already).
  FERRY_HOT static bool release(ferry_sample_t& slot) noexcept {
    // SYNC: relaxed; a double release on two threads at once is the user's
    // race, the check only catches the sequential mistake.
    if (slot.state.load(std::memory_order_relaxed) != ferry_sample_t::Held) return false;
    std::optional<RawSample> sample = std::move(slot.sample);
    slot.sample.reset();
    slot.data = nullptr;
    slot.size = 0;
    // SYNC: release, pairs with the acquire loads in collect() and
    // all_released(): our accesses to the slot happen before the owner
    // reuses it or a sweep deletes the block. Our last access to it; the
    // sample itself is released after, through its own HeldSamples.
    slot.state.store(ferry_sample_t::Released, std::memory_order_release);
    return true;
  }
  // The subscriber is gone: deletes the block now if no slot is held, else
  // keeps it for a later sweep. Also sweeps the blocks kept earlier.
  static void close(SampleSlots* slots) noexcept;
  // Deletes the kept blocks whose slots are all back (subscriber creation).
  static void sweep() noexcept;

 private:
  void collect() noexcept;
  [[nodiscard]] bool all_released() const noexcept;

  ferry_sample_t slots_[kSlots];
  std::uint64_t free_ = (std::uint64_t{1} << kSlots) - 1;  // owner only; bit i: slot i is free
};

}  // namespace ferry::c
