#include "format.hpp"

#include <fmt/format.h>

namespace ferry::cli {

namespace {
std::string scaled(double value, const char* const* units, int count, double step,
                   const char* sep) {
  int unit = 0;
  while (value >= step * 0.9995 && unit + 1 < count) {
    value /= step;
    ++unit;
  }
  if (unit == 0 && value == static_cast<double>(static_cast<std::uint64_t>(value))) {
    return fmt::format("{}{}{}", static_cast<std::uint64_t>(value), sep, units[0]);
  }
  const int decimals = value < 10 ? 2 : value < 100 ? 1 : 0;
  return fmt::format("{:.{}f}{}{}", value, decimals, sep, units[unit]);
}
}  // namespace

std::string human_rate(std::optional<double> per_second) {
  if (!per_second) return "-";
  static const char* const units[] = {"", "k", "M", "G"};
  if (*per_second < 1000) return fmt::format("{:.1f}", *per_second);
  return scaled(*per_second, units, 4, 1000, "");
}

std::string human_bytes(std::optional<double> bytes, const char* separator) {
  if (!bytes) return "-";
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  return scaled(*bytes, units, 5, 1024, separator);
}

std::string human_count(std::uint64_t count) {
  if (count < 10000) return std::to_string(count);
  static const char* const units[] = {"", "k", "M", "G", "T"};
  return scaled(static_cast<double>(count), units, 5, 1000, "");
}

std::string human_millis(std::uint64_t millis) {
  if (millis < 1000) return fmt::format("{}ms", millis);
  if (millis < 60'000) return fmt::format("{:.1f}s", static_cast<double>(millis) / 1000);
  const std::uint64_t seconds = millis / 1000;
  if (seconds < 3600) return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  return fmt::format("{}h{:02}m", seconds / 3600, (seconds / 60) % 60);
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // C1 controls (U+0080..U+009F) are 0xC2 0x80..0x9F in UTF-8.
    const bool c1 = c == 0xC2 && i + 1 < text.size() &&
                    static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F || c1) {
      out += fmt::format("\\x{:02x}", c1 ? static_cast<unsigned char>(text[++i]) : c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace ferry::cli
