// SampleSlots: collecting released slots, and the blocks that outlive
// their subscriber.
#include "sample_slots.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace ferry::c {

static_assert(SampleSlots::kSlots == detail::HeldSamples::kMaxBuffers,
              "one C sample slot per buffer a subscriber may hold");

namespace {

// Blocks of destroyed subscribers that still have a sample out. Touched only
// when a subscriber is created or destroyed, never on the hot path.
struct Kept {
  std::mutex mutex;
  std::vector<SampleSlots*> blocks;
};

Kept& kept() {
  static Kept* instance = new Kept;  // never destroyed: releases may run during exit
  return *instance;
}

}  // namespace

void SampleSlots::collect() noexcept {
  for (std::uint32_t i = 0; i < kSlots; ++i) {
    // SYNC: acquire, pairs with the release store in release(): the
    // releaser's accesses to the slot happen before we reuse it.
    if (slots_[i].state.load(std::memory_order_acquire) == ferry_sample_t::Released) {
      // SYNC: relaxed; only the owner moves a slot out of Released.
      slots_[i].state.store(ferry_sample_t::Free, std::memory_order_relaxed);
      free_ |= std::uint64_t{1} << i;
    }
  }
}

bool SampleSlots::all_released() const noexcept {
  return std::all_of(std::begin(slots_), std::end(slots_), [](const ferry_sample_t& s) {
    // SYNC: acquire, pairs with the release store in release(): after it,
    // that slot's releaser no longer touches the block.
    return s.state.load(std::memory_order_acquire) != ferry_sample_t::Held;
  });
}

void SampleSlots::sweep() noexcept {
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  std::erase_if(k.blocks, [](SampleSlots* block) {
    if (!block->all_released()) return false;
    delete block;
    return true;
  });
}

void SampleSlots::close(SampleSlots* slots) noexcept {
  sweep();
  if (slots->all_released()) {
    delete slots;
    return;
  }
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  try {
    k.blocks.push_back(slots);
  } catch (...) {
    // No memory to remember it: leak the block rather than free it under a
    // sample that is still held.
  }
}

}  // namespace ferry::c
