#pragma once
// The syntax of a field's type: "T", "T[N]", "T[<=N]" or "string<=N".

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::config::detail {

struct FieldTypeRef {
  std::string_view base;               // "u8", "char", "Pose"
  std::optional<std::uint64_t> count;  // N when written T[N], T[<=N] or string<=N
  bool bounded = false;                // T[<=N] or string<=N: at most N
};

// Spaces around the base and inside the brackets are tolerated. The error
// is a message "what is wrong; what was expected" (without the position).
[[nodiscard]] std::expected<FieldTypeRef, std::string> parse_field_type(std::string_view text);

}  // namespace ferry::config::detail
