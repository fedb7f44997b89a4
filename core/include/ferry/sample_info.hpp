#pragma once
/// @file
/// SampleInfo: what a subscriber learns about each sample besides its bytes
/// (docs/cpp-api.md).

#include <cstdint>

namespace ferry {

/// What a sample carries besides its bytes. A value of its own: the ring
/// slot's format may change without changing it.
struct SampleInfo {
  /// Per publisher, 0, 1, 2, ... one per publish() (a gap is samples this
  /// subscriber did not get).
  std::uint64_t sequence = 0;
  /// Unique in the domain while the publisher lives (Publisher::publisher_id()).
  std::uint64_t publisher_id = 0;
  /// CLOCK_REALTIME at publish(), in nanoseconds since the epoch.
  std::uint64_t publish_time_ns = 0;
  /// Field by field.
  bool operator==(const SampleInfo&) const = default;
};

}  // namespace ferry
