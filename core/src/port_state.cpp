#include "port_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ferry/discovery/objects.hpp"

namespace ferry::detail {

transport::Segment open_segment(const std::string& name, transport::SegmentKind kind,
                                std::uint32_t version, const transport::ObjectOwner& owner) {
  auto segment = transport::Segment::open(name, kind, version, discovery::kMatchedOpenTimeout,
                                          transport::SegmentAccess::ReadWrite, owner);
  if (!segment && segment.error() == transport::SegmentError::Untrusted) {
    throw std::runtime_error(
        transport::untrusted_name(name, owner).value_or("/dev/shm/" + name + " is not ferryd's"));
  }
  if (!segment) {
    throw std::runtime_error(
        fmt::format("cannot open shared-memory object '{}': {}", name, to_string(segment.error())));
  }
  return std::move(*segment);
}

transport::DoorbellWord* doorbell_in(transport::Segment& segment) {
  if (segment.payload_size() < sizeof(transport::DoorbellWord)) {
    throw std::runtime_error(fmt::format("doorbell object '{}' is too small", segment.name()));
  }
  return reinterpret_cast<transport::DoorbellWord*>(segment.payload());
}

namespace {
// {length, flags} and the sample's metadata before a slot's payload.
using transport::kSlotHeader;  // ferry/transport/slot_format.hpp
}  // namespace

PortState::PortState(std::string domain_name, std::string topic_name,
                     const discovery::PortCreated& created,
                     std::shared_ptr<DomainPoolView> pool_view)
    : domain(std::move(domain_name)),
      topic(std::move(topic_name)),
      identity(created.port_id),
      port_id(created.port_id),
      request(),
      config(created.topic),
      pool(std::move(pool_view)),
      inline_max(created.topic.slot_size > kSlotHeader ? created.topic.slot_size - kSlotHeader
                                                       : 0) {
  if (inline_max < sizeof(PooledSlot)) {
    throw std::runtime_error(
        fmt::format("topic '{}' has ring slots of {} bytes, too small to carry "
                    "a pool reference",
                    topic, created.topic.slot_size));
  }
  guard_.node_state = pool->node_state;
}

}  // namespace ferry::detail
