#pragma once
// What take() and take_many() both ask of a subscriber's queues.
#include <cstdint>

#include "subscriber_state.hpp"

namespace ferry::detail {

// A typed topic's samples are exactly its size; a bytes topic's at most its
// max_size. Anything else came from a broken peer and is not handed out.
inline bool plausible_size(const SubscriberState& state, std::uint64_t size) noexcept {
  if (state.config.sample_size != 0) return size == state.config.sample_size;
  return size <= state.config.max_size;
}

// Whether a round would find something now (QueueSet::any_data), after
// applying what was handed over: what a sleeping take waits for.
inline bool any_data(SubscriberState& state) noexcept { return state.queues().any_data(); }

}  // namespace ferry::detail
