// publish_many (docs/batches.md): a batch of samples of one size through the
// topic's policy, per sample, with one tail store and at most one doorbell
// wake-up per queue and batch (per refill while a block queue drains).
// Inline samples only: a sample larger than a slot travels through the
// pool one by one (its own chunk each; no batched loan, see docs/batches.md).
#include "ferry/detail/ports.hpp"
#include "node_runtime.hpp"
#include "publish_policy.hpp"
#include "publisher_state.hpp"

namespace ferry::detail {

// Publishes `count` samples of `size` bytes each, back to back at `data`,
// in order (docs/batches.md): the topic's policy per sample, one tail store
// and at most one wake-up per queue and batch where they fit a slot; larger
// samples go one by one through the pool. Counts are samples x queues.
// Sequences are one per sample; publish_time_ns is read once per batch.
// count == 0: nothing happens.
PublishResult PublisherPort::publish_many(const void* data, std::size_t count,
                                          std::uint32_t size) noexcept {
  PublishResult result;
  if (count == 0) return result;
  const auto* bytes = static_cast<const std::byte*>(data);
  if (size > state_->inline_max) {
    // Pooled samples: each needs its own chunk anyway; one by one.
    for (std::size_t k = 0; k < count; ++k) add_result(result, publish(bytes + k * size, size));
    return result;
  }
  Outgoing batch{bytes, count, size, kSlotInline,
                 transport::SlotMeta{next_sequence_, publisher_id_, publish_time_ns()}};
  next_sequence_ += count;
  // The lane (one queue, inline, no drop_oldest, no history): what fits
  // goes with one tail store; the rest, if any, by the policy below.
  // The lane's producer is a RingProducer (PublisherState::rebuild_lane).
  if (auto* lane = static_cast<transport::RingProducer*>(lane_->open())) [[likely]] {
    const std::size_t n = lane->stage_many(bytes, count, size, kSlotInline, batch.info);
    lane->publish();
    result.delivered = static_cast<std::uint32_t>(n);  // n <= capacity
    if (n == count) return result;
    batch = batch.from(n);
  }
  add_result(result, deliver(*state_, batch));
  return result;
}

}  // namespace ferry::detail
