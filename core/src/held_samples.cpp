#include "held_samples.hpp"

#include <bit>
#include <new>

namespace ferry::detail {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

HeldSamples* HeldSamples::create(std::uint32_t count, std::size_t buffer_size,
                                 std::shared_ptr<DomainPoolView> pool) {
  if (count == 0 || count > kMaxBuffers) throw std::bad_alloc();
  const std::size_t rounded = round_up(buffer_size == 0 ? 1 : buffer_size);
  auto* storage = static_cast<std::byte*>(::operator new(rounded * count, std::align_val_t{kAlign}));
  return new HeldSamples(count, rounded, storage, std::move(pool));
}

HeldSamples::HeldSamples(std::uint32_t count, std::size_t buffer_size, std::byte* storage,
                         std::shared_ptr<DomainPoolView> pool) noexcept
    : count_(count),
      buffer_size_(buffer_size),
      storage_(storage),
      all_free_((std::uint64_t{1} << count) - 1),
      pool_(std::move(pool)),
      state_(all_free_) {}

HeldSamples::~HeldSamples() { ::operator delete(storage_, std::align_val_t{kAlign}); }

bool HeldSamples::acquire(std::uint32_t& token, std::byte*& buffer) noexcept {
  // SYNC: acquire, pairs with the acq_rel fetch_or in release(): a reader on
  // another thread has finished with the buffer before we overwrite it.
  const std::uint64_t free_bits = state_.load(std::memory_order_acquire) & all_free_;
  if (free_bits == 0) return false;
  const auto index = static_cast<std::uint32_t>(std::countr_zero(free_bits));
  // Only this thread clears bits, so the bit found above is still set.
  // SYNC: relaxed; the buffer's new contents are published to a releasing
  // thread through the Sample handle the user passes it, not through this word.
  state_.fetch_and(~(std::uint64_t{1} << index), std::memory_order_relaxed);
  token = index;
  buffer = storage_ + std::size_t{index} * buffer_size_;
  return true;
}

void HeldSamples::release(std::uint32_t token) noexcept {
  if (token >= count_) return;
  // SYNC: relaxed; see hold_chunk.
  if (const std::uint64_t ref = chunks_[token].load(std::memory_order_relaxed); ref != 0) {
    chunks_[token].store(0, std::memory_order_relaxed);
    // A failure means ferryd reclaimed the chunk already (this node was
    // declared dead): nothing is left to give back.
    (void)pool_->pool.release(transport::ChunkRef::unpack(ref), pool_->owner);
  }
  const std::uint64_t bit = std::uint64_t{1} << token;
  // SYNC: acq_rel. Release pairs with the acquire load in acquire(); acquire
  // pairs with close() so that whoever deletes sees every other access.
  const std::uint64_t before = state_.fetch_or(bit, std::memory_order_acq_rel);
  finish_if_done(before | bit);
}

void HeldSamples::close() noexcept {
  // SYNC: acq_rel, pairs with the fetch_or in release() (see there).
  const std::uint64_t before = state_.fetch_or(kClosedBit, std::memory_order_acq_rel);
  finish_if_done(before | kClosedBit);
}

void HeldSamples::finish_if_done(std::uint64_t state_after) noexcept {
  // Exactly one read-modify-write produces "closed and all free": its caller deletes.
  if (state_after == (kClosedBit | all_free_)) delete this;
}

std::uint32_t HeldSamples::held_count() const noexcept {
  // SYNC: relaxed; a statistic.
  const std::uint64_t free_bits = state_.load(std::memory_order_relaxed) & all_free_;
  return count_ - static_cast<std::uint32_t>(std::popcount(free_bits));
}

}  // namespace ferry::detail
