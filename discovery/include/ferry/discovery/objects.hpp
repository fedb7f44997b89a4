#pragma once
// The shared-memory objects ferryd makes and the runtime opens: their kinds
// and layout versions, so both sides agree.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/transport/names.hpp"
#include "ferry/transport/pool_layout.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::discovery {

// A subscriber's doorbell: a Segment of kind Doorbells holding one
// transport::DoorbellWord at payload offset 0.
inline constexpr transport::SegmentKind kDoorbellKind = transport::SegmentKind::Doorbells;
inline constexpr std::uint32_t kDoorbellLayoutVersion = 1;

// A queue: a Segment of kind Ring holding one transport ring at payload offset 0.
inline constexpr transport::SegmentKind kRingKind = transport::SegmentKind::Ring;

// The domain's loaned-memory pool: a Segment of kind Pool holding one
// transport pool at payload offset 0, named "ferry.<domain>.pool". Nodes use
// their Welcome::node_slot as their pool owner id.
inline constexpr transport::SegmentKind kPoolKind = transport::SegmentKind::Pool;
[[nodiscard]] inline std::string pool_object_name(std::string_view domain) {
  return transport::shm_name(domain, "pool");
}

// ferryd seals an object before it names it in a message, so an opener never
// has to wait long; this only covers a slow machine.
inline constexpr std::chrono::milliseconds kOpenTimeout{1000};

// Rings and doorbells named in a Matched exist and are sealed when it is sent
// (a ring's name lingers until its survivor releases it). One that is
// missing belongs to a peer that left since: waiting would only stall the
// node's runtime thread (and the replies queued behind that Matched).
inline constexpr std::chrono::milliseconds kMatchedOpenTimeout{0};

}  // namespace ferry::discovery
