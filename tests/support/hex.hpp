#pragma once
// Bytes as lower-case hex, two digits a byte: how the interop tests hand
// binary data to, and compare it with, the reference readers.

#include <cstddef>
#include <span>
#include <string>

namespace ferry::test {

inline std::string hex(std::span<const std::byte> bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (const std::byte b : bytes) {
    out += kDigits[std::to_integer<unsigned>(b) >> 4];
    out += kDigits[std::to_integer<unsigned>(b) & 15];
  }
  return out;
}

}  // namespace ferry::test
