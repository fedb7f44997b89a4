#pragma once
// The raw-ring transport's memory: one Segment of the private domain
// ("ferry.<domain>.bench-raw") holding some rings of one geometry and some
// buffers for messages too large for a slot. Made by the orchestrator before
// the fork (the sides inherit the mapping); its name is removed by the
// destructor, and with the domain's other objects if we are interrupted.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::bench {

class PrivateDomain;

// Messages up to this size travel inside the slot (copied in and out);
// larger ones as a RawRef to a buffer in the area (zero copy, the floor of
// a loaned sample).
inline constexpr std::uint64_t kRawInlineMax = 4096;

struct RawRef {
  std::uint64_t seq = 0;
  std::uint64_t offset = 0;  // from the start of the area's payload
  std::uint64_t size = 0;
};

[[nodiscard]] bool raw_inline(std::uint64_t size) noexcept;
// The ring geometry for messages of `size` bytes.
[[nodiscard]] transport::RingGeometry raw_geometry(std::uint64_t size,
                                                   std::uint32_t capacity) noexcept;

class RawRingArea {
 public:
  // Throws std::runtime_error when the segment cannot be made.
  RawRingArea(const PrivateDomain& domain, const transport::RingGeometry& geometry,
              std::uint32_t rings, std::uint32_t buffers, std::uint64_t buffer_size);
  ~RawRingArea();
  RawRingArea(const RawRingArea&) = delete;
  RawRingArea& operator=(const RawRingArea&) = delete;

  [[nodiscard]] std::byte* ring(std::uint32_t i) const noexcept { return base_ + i * ring_stride_; }
  [[nodiscard]] std::size_t ring_bytes() const noexcept { return ring_bytes_; }
  [[nodiscard]] std::uint64_t buffer_offset(std::uint32_t i) const noexcept {
    return buffers_at_ + i * buffer_stride_;
  }
  [[nodiscard]] std::byte* at(std::uint64_t offset) const noexcept { return base_ + offset; }
  // Is [offset, offset + size) a buffer's bytes? (never trust the peer)
  [[nodiscard]] bool valid(const RawRef& ref) const noexcept;

 private:
  std::optional<transport::Segment> segment_;
  std::byte* base_ = nullptr;
  std::size_t ring_bytes_ = 0;
  std::size_t ring_stride_ = 0;
  std::uint64_t buffers_at_ = 0;
  std::uint64_t buffer_stride_ = 0;
  std::uint64_t buffer_size_ = 0;
  std::uint32_t buffers_ = 0;
};

}  // namespace ferry::bench
