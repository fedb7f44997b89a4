#pragma once
// What a subscriber learns about each sample besides its bytes (DESIGN 1.7).
// It travels in the ring slot next to {length, flags} (and in a publisher's
// history), so the struct is the transport's slot metadata itself: taking a
// sample copies it once, into the subscriber's held-sample bookkeeping.

#include <time.h>

#include <cstdint>

#include "ferry/transport/platform.hpp"  // FERRY_HOT
#include "ferry/transport/ring_layout.hpp"

namespace ferry {

// sequence: per publisher, 0, 1, 2, ... one per publish() (a gap is samples
// this subscriber did not get); publisher_id: unique in the domain while the
// publisher lives; publish_time_ns: CLOCK_REALTIME at publish().
using SampleInfo = transport::SlotMeta;

namespace detail {
// CLOCK_REALTIME in nanoseconds: clock_gettime is answered by the vDSO, no
// system call.
[[nodiscard]] FERRY_HOT inline std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000U +
         static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace detail

}  // namespace ferry
