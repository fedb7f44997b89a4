#pragma once
/// @file
/// What a subscriber learns about each sample besides its bytes (docs/cpp-api.md).
/// It travels in the ring slot next to {length, flags} (and in a publisher's
/// history), so the struct is the transport's slot metadata itself: taking a
/// sample copies it once, into the subscriber's held-sample bookkeeping.

#include <cstdint>

#include "ferry/detail/publish_clock.hpp"  // detail::realtime_ns
#include "ferry/transport/ring_layout.hpp"

namespace ferry {

/// What a sample carries besides its bytes. sequence: per publisher, 0, 1,
/// 2, ... one per publish() (a gap is samples this subscriber did not get);
/// publisher_id: unique in the domain while the publisher lives;
/// publish_time_ns: CLOCK_REALTIME at publish() (read through the TSC where
/// it can be: detail/publish_clock.hpp).
using SampleInfo = transport::SlotMeta;

}  // namespace ferry
