#pragma once
// 'text': how error messages quote a name or value from the user's file.

#include <string>
#include <string_view>

namespace ferry::config::detail {

[[nodiscard]] inline std::string quote(std::string_view text) {
  return "'" + std::string(text) + "'";
}

}  // namespace ferry::config::detail
