#pragma once
// The syntax of a field's type: "T" or "T[N]".

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::config::detail {

struct FieldTypeRef {
  std::string_view base;               // "u8", "char", "Pose"
  std::optional<std::uint64_t> count;  // N when written T[N]
};

// Spaces around the base and inside the brackets are tolerated. The error
// is a message "what is wrong; what was expected" (without the position).
[[nodiscard]] std::expected<FieldTypeRef, std::string> parse_field_type(std::string_view text);

}  // namespace ferry::config::detail
