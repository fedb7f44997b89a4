#pragma once
// What take() and take_many() both ask of a subscriber's queues.
#include <cstdint>
#include <memory>
#include <vector>

#include "subscriber_state.hpp"

namespace ferry::detail {

// A typed topic's samples are exactly its size; a bytes topic's at most its
// max_size. Anything else came from a broken peer and is not handed out.
inline bool plausible_size(const SubscriberState& state, std::uint64_t size) noexcept {
  if (state.config.sample_size != 0) return size == state.config.sample_size;
  return size <= state.config.max_size;
}

// After a daemon restart: whether q must wait for the queues it replaces
// (the same publisher's older ones) to be drained first. Clears the wait
// once they are gone.
inline bool must_wait(const std::vector<std::unique_ptr<SubscriberConnection>>& queues,
                      SubscriberConnection& q) noexcept {
  if (q.waits_for == 0) [[likely]]
    return false;
  for (const auto& other : queues) {
    if (other->peer_identity == q.waits_for && other->match_order < q.match_order) return true;
  }
  q.waits_for = 0;
  return false;
}

// Whether a queue has a sample we may take now (or a finished previous-
// daemon queue that pop_next drops): what a sleeping take waits for.
inline bool any_data(SubscriberState& state) noexcept {
  auto& queues = state.connections();
  for (const auto& q : queues) {
    if (q->consumer.has_data() && !must_wait(queues, *q)) return true;
    if (q->old_epoch && q->consumer.finished()) return true;  // pop_next drops it
  }
  return false;
}

}  // namespace ferry::detail
