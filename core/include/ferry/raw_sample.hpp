#pragma once
/// @file
/// RawSample: a sample taken by a RawSubscriber (ferry/raw.hpp).

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "ferry/detail/ports.hpp"
#include "ferry/sample_info.hpp"

namespace ferry {

/// A taken sample's bytes, valid until this handle is destroyed. Move-only.
class RawSample {
 public:
  /// Move-only: the moved-from handle holds nothing.
  ///@{
  RawSample(RawSample&& other) noexcept
      : held_(std::exchange(other.held_, nullptr)), token_(other.token_), bytes_(other.bytes_) {}
  RawSample& operator=(RawSample&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, nullptr);
      token_ = other.token_;
      bytes_ = other.bytes_;
    }
    return *this;
  }
  RawSample(const RawSample&) = delete;
  RawSample& operator=(const RawSample&) = delete;
  ///@}
  /// Releases the sample.
  ~RawSample() { reset(); }

  /// The sample's bytes, read-only.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  /// The first byte.
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  /// How many bytes.
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  /// As Sample<T>::info(): sequence, publisher and publish time.
  [[nodiscard]] SampleInfo info() const noexcept { return held_->sample_info(token_); }

 private:
  friend class RawSubscriber;
  RawSample(detail::HeldSamples* held, std::uint32_t token,
            std::span<const std::byte> bytes) noexcept
      : held_(held), token_(token), bytes_(bytes) {}
  FERRY_HOT void reset() noexcept {
    if (held_ != nullptr) detail::release_held(std::exchange(held_, nullptr), token_);
  }

  detail::HeldSamples* held_;
  std::uint32_t token_;
  std::span<const std::byte> bytes_;
};

}  // namespace ferry
