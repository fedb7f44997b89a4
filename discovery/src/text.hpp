#pragma once
// Internal: builds error messages without <format> (g++ 12's libstdc++ has
// none) and without pulling fmt into a library that otherwise does not need it.

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace ferry::discovery::text {

inline void append(std::string& out, std::string_view s) { out.append(s); }
inline void append(std::string& out, const char* s) { out.append(s); }
inline void append(std::string& out, const std::string& s) { out.append(s); }
inline void append(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> && !std::same_as<T, bool>) void append(std::string& out, T value) {
  out.append(std::to_string(value));
}

// cat("field '", name, "' is ", 12) -> "field 'x' is 12"
template <class... Parts>
[[nodiscard]] std::string cat(const Parts&... parts) {
  std::string out;
  (append(out, parts), ...);
  return out;
}

// "0x0000004d"
[[nodiscard]] inline std::string hex32(std::uint32_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kDigits[(value >> shift) & 0xF]);
  return out;
}

}  // namespace ferry::discovery::text
