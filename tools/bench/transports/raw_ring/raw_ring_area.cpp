#include "transports/raw_ring/raw_ring_area.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "ferry/transport/names.hpp"
#include "ferry/transport/slot_format.hpp"
#include "harness/private_domain.hpp"

namespace ferry::bench {

namespace {

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t to) noexcept {
  return (v + to - 1) / to * to;
}

// The area is a SegmentKind::Test object (the transport has no kind for
// tools); nobody but the run's own sides, which inherit the mapping, opens it.
constexpr std::uint32_t kAreaLayoutVersion = 1;

}  // namespace

bool raw_inline(std::uint64_t size) noexcept { return size <= kRawInlineMax; }

transport::RingGeometry raw_geometry(std::uint64_t size, std::uint32_t capacity) noexcept {
  const std::uint64_t payload = raw_inline(size) ? size : sizeof(RawRef);
  return transport::RingGeometry{capacity, transport::slot_size_for_payload(payload),
                                 transport::RingMode::Spsc};
}

RawRingArea::RawRingArea(const PrivateDomain& domain, const transport::RingGeometry& geometry,
                         std::uint32_t rings, std::uint32_t buffers, std::uint64_t buffer_size)
    : ring_bytes_(transport::ring_bytes(geometry)), buffer_size_(buffer_size), buffers_(buffers) {
  if (ring_bytes_ == 0) throw std::runtime_error("raw-ring: invalid ring geometry");
  ring_stride_ = round_up(ring_bytes_, 4096);
  buffers_at_ = ring_stride_ * rings;
  buffer_stride_ = round_up(buffer_size, 4096);
  const std::uint64_t total = buffers_at_ + buffer_stride_ * buffers;
  const std::string name = transport::shm_name(domain.name(), "bench-raw");
  auto seg = transport::Segment::create(name, transport::SegmentKind::Test, kAreaLayoutVersion,
                                        total, transport::SegmentCreateOptions{true, 0600});
  if (!seg) {
    throw std::runtime_error(
        fmt::format("raw-ring: cannot create the shared-memory object {} ({} bytes): {}", name,
                    total, transport::to_string(seg.error())));
  }
  segment_.emplace(std::move(*seg));
  base_ = segment_->payload();
  for (std::uint32_t i = 0; i < rings; ++i) {
    if (!transport::format_ring(ring(i), ring_bytes_, geometry)) {
      throw std::runtime_error("raw-ring: cannot format a ring");
    }
  }
  segment_->seal();
}

RawRingArea::~RawRingArea() {
  if (segment_) (void)transport::Segment::remove(segment_->name());
}

bool RawRingArea::valid(const RawRef& ref) const noexcept {
  if (ref.offset < buffers_at_ || ref.size > buffer_size_) return false;
  const std::uint64_t rel = ref.offset - buffers_at_;
  return rel % buffer_stride_ == 0 && rel / buffer_stride_ < buffers_;
}

}  // namespace ferry::bench
