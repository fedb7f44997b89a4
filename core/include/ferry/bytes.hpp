#pragma once
// ferry::Bytes: the sample type of `type: bytes` topics (variable size, up to
// the topic's max_size). A Loan<Bytes> is a writable span, a Sample<Bytes> a
// read-only one.

#include <cstddef>
#include <span>

#include "ferry/type_name.hpp"

namespace ferry {

class Bytes {
 public:
  Bytes() = default;
  explicit Bytes(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  [[nodiscard]] std::span<const std::byte> span() const noexcept { return bytes_; }

 private:
  std::span<const std::byte> bytes_;
};

// A loaned chunk of a bytes topic, to fill before publishing.
class MutableBytes {
 public:
  MutableBytes() = default;
  explicit MutableBytes(std::span<std::byte> bytes) noexcept : bytes_(bytes) {}
  [[nodiscard]] std::byte* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  [[nodiscard]] std::span<std::byte> span() const noexcept { return bytes_; }

 private:
  std::span<std::byte> bytes_;
};

}  // namespace ferry

// The type name ferryd gives `type: bytes` topics.
FERRY_TYPE_NAMED(ferry::Bytes, "ferry::Bytes");
