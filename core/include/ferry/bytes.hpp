#pragma once
/// @file
/// ferry::Bytes: the sample type of `type: bytes` topics (variable size, up to
/// the topic's max_size). A Loan<Bytes> is a writable span, a Sample<Bytes> a
/// read-only one.

#include <cstddef>
#include <span>

#include "ferry/type_name.hpp"

namespace ferry {

/// The sample type of a bytes topic: a read-only view of a sample's bytes.
class Bytes {
 public:
  Bytes() = default;
  /// A view of `bytes` (not a copy).
  explicit Bytes(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}
  /// The first byte.
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  /// How many bytes the sample has.
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  /// The bytes as a span.
  [[nodiscard]] std::span<const std::byte> span() const noexcept { return bytes_; }

 private:
  std::span<const std::byte> bytes_;
};

/// A loaned chunk of a bytes topic, to fill before publishing.
class MutableBytes {
 public:
  MutableBytes() = default;
  /// A writable view of `bytes` (not a copy).
  explicit MutableBytes(std::span<std::byte> bytes) noexcept : bytes_(bytes) {}
  /// The first byte to write.
  [[nodiscard]] std::byte* data() const noexcept { return bytes_.data(); }
  /// How many bytes the loan has (what loan(size) asked for).
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  /// The bytes as a span.
  [[nodiscard]] std::span<std::byte> span() const noexcept { return bytes_; }

 private:
  std::span<std::byte> bytes_;
};

}  // namespace ferry

// The type name ferryd gives `type: bytes` topics (a registration, not an
// API name: left out of the API reference).
/// @cond
FERRY_TYPE_NAMED(ferry::Bytes, "ferry::Bytes");
/// @endcond
