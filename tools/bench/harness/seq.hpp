#pragma once
// Every message starts with its 8-byte sequence number, which the receiver checks.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ferry::bench {

[[nodiscard]] inline std::uint64_t read_seq(const std::byte* p) noexcept {
  std::uint64_t s;
  std::memcpy(&s, p, sizeof s);
  return s;
}
inline void write_seq(std::byte* p, std::uint64_t seq) noexcept {
  std::memcpy(p, &seq, sizeof seq);
}

}  // namespace ferry::bench
