#pragma once
// Opens a running domain's queues from outside, read-write, as a rogue or
// curious peer could: every ring of the domain (one per subscriber and
// matched publisher), and the n-th queued slot of one.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ferry/discovery/objects.hpp"
#include "ferry/transport/names.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::test {

inline std::vector<transport::Segment> open_queue_rings(const std::string& domain) {
  std::vector<transport::Segment> rings;
  for (const auto& name : transport::list_domain_objects(domain)) {
    auto ring = transport::Segment::open(name, discovery::kRingKind, transport::kRingLayoutVersion,
                                         std::chrono::milliseconds(0));
    if (ring) rings.push_back(std::move(*ring));
  }
  return rings;
}

inline transport::ring_layout::RingHeader& ring_header(transport::Segment& ring) {
  return *reinterpret_cast<transport::ring_layout::RingHeader*>(ring.payload());
}

// The `n`-th queued slot ({length, flags, SlotMeta, payload}) past the head.
inline std::byte* queued_slot(transport::Segment& ring, std::uint32_t n) {
  const auto& geometry = ring_header(ring).geometry;
  const auto stats = transport::read_ring_stats(ring.payload(), ring.payload_size());
  return ring.payload() + geometry.slots_offset +
         static_cast<std::size_t>((stats.head + n) & geometry.mask) * geometry.slot_size;
}

}  // namespace ferry::test
