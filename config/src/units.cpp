#include "ferry/config/units.hpp"

#include <array>
#include <utility>

namespace ferry::config {

namespace {
constexpr std::array<std::pair<std::string_view, unsigned>, 4> kUnits{
    {{"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}}};
}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) noexcept {
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (__builtin_mul_overflow(value, 10U, &value) || __builtin_add_overflow(value, digit, &value))
      return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string_view unit = text.substr(i);
  if (unit.starts_with(' ')) unit.remove_prefix(1);
  if (unit.empty()) return i == text.size() ? std::optional(value) : std::nullopt;
  for (const auto& [name, shift] : kUnits) {
    if (unit != name) continue;
    if (shift > 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
  }
  return std::nullopt;
}

std::string format_size(std::uint64_t bytes) {
  for (auto it = kUnits.rbegin(); it != kUnits.rend(); ++it) {
    const std::uint64_t unit = std::uint64_t{1} << it->second;
    if (bytes != 0 && bytes % unit == 0)
      return std::to_string(bytes / unit) + " " + std::string(it->first);
  }
  return std::to_string(bytes) + " B";
}

}  // namespace ferry::config
