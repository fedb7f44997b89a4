#include "shm_factory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <new>

#include "ferry/discovery/objects.hpp"
#include "ferry/transport/doorbell.hpp"
#include "ferry/transport/ring.hpp"

namespace ferry::discovery {

std::expected<void, std::string> ShmObjects::create_ring(const std::string& name,
                                                         std::uint32_t capacity,
                                                         std::uint32_t slot_size, Policy policy) {
  const transport::RingGeometry geometry{
      capacity, slot_size,
      policy == Policy::DropOldest ? transport::RingMode::Overwrite : transport::RingMode::Spsc};
  const std::size_t bytes = transport::ring_bytes(geometry);
  if (bytes == 0) {
    return std::unexpected(fmt::format("invalid ring geometry for '{}': capacity {}, slot size {}",
                                       name, capacity, slot_size));
  }
  // Exclusive: the name is fresh (object_names.hpp); an object already
  // there is someone else's and stays.
  auto segment =
      transport::Segment::create(name, kRingKind, transport::kRingLayoutVersion, bytes,
                                 {.remove_stale = false, .mode = mode_, .group = group_});
  if (!segment) {
    return std::unexpected(fmt::format("cannot create ring '{}' ({} bytes): {}", name, bytes,
                                       transport::to_string(segment.error())));
  }
  if (auto formatted =
          transport::format_ring(segment->payload(), segment->payload_size(), geometry);
      !formatted) {
    transport::Segment::remove(name);
    return std::unexpected(
        fmt::format("cannot format ring '{}': {}", name, transport::to_string(formatted.error())));
  }
  segment->seal();
  return {};
}

std::expected<void, std::string> ShmObjects::create_doorbell(const std::string& name) {
  auto segment = transport::Segment::create(
      name, kDoorbellKind, kDoorbellLayoutVersion, sizeof(transport::DoorbellWord),
      {.remove_stale = false, .mode = mode_, .group = group_});
  if (!segment) {
    return std::unexpected(fmt::format("cannot create doorbell '{}': {}", name,
                                       transport::to_string(segment.error())));
  }
  new (segment->payload()) transport::DoorbellWord{};
  segment->seal();
  return {};
}

std::expected<void, std::string> ShmObjects::adopt_doorbell(const std::string& name) {
  auto segment = transport::Segment::open(
      name, kDoorbellKind, kDoorbellLayoutVersion, std::chrono::milliseconds(0),
      transport::SegmentAccess::ReadWrite, transport::ObjectOwner{::geteuid(), mode_});
  if (!segment) {
    return std::unexpected(
        fmt::format("cannot adopt doorbell '{}': {}", name, transport::to_string(segment.error())));
  }
  return {};
}

void ShmObjects::remove(const std::string& name) { transport::Segment::remove(name); }

}  // namespace ferry::discovery
