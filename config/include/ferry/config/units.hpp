#pragma once
// Byte sizes as written in YAML: "4096", "512B", "64KiB", "4MiB", "1GiB".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::config {

// Digits, optionally one space, then an optional unit B, KiB, MiB or GiB
// (binary, case-sensitive: "4KB" and "4k" are refused as ambiguous).
// nullopt on bad syntax or overflow.
[[nodiscard]] std::optional<std::uint64_t> parse_size(std::string_view text) noexcept;

// Largest exact unit: 4096 -> "4 KiB", 3110408 -> "3110408 B", 0 -> "0 B".
[[nodiscard]] std::string format_size(std::uint64_t bytes);

}  // namespace ferry::config
