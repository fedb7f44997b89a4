#pragma once
// The shared-memory objects ferryd makes and the runtime opens: their kinds
// and layout versions, so both sides agree.

#include <chrono>
#include <cstdint>

#include "ferry/transport/segment.hpp"

namespace ferry::discovery {

// A subscriber's doorbell: a Segment of kind Doorbells holding one
// transport::DoorbellWord at payload offset 0.
inline constexpr transport::SegmentKind kDoorbellKind = transport::SegmentKind::Doorbells;
inline constexpr std::uint32_t kDoorbellLayoutVersion = 1;

// A queue: a Segment of kind Ring holding one transport ring at payload offset 0.
inline constexpr transport::SegmentKind kRingKind = transport::SegmentKind::Ring;

// ferryd seals an object before it names it in a message, so an opener never
// has to wait long; this only covers a slow machine.
inline constexpr std::chrono::milliseconds kOpenTimeout{1000};

}  // namespace ferry::discovery
