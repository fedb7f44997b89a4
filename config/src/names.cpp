#include "ferry/config/names.hpp"

#include <algorithm>

#include "ferry/config/limits.hpp"
#include "ferry/config/schema.hpp"

namespace ferry::config {

namespace {
bool is_alpha(char c) noexcept { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_alnum(char c) noexcept { return is_alpha(c) || is_digit(c); }
}  // namespace

bool is_valid_domain_name(std::string_view name) noexcept {
  return !name.empty() && name.size() <= kMaxDomainNameLength &&
         std::ranges::all_of(name, [](char c) { return is_alnum(c) || c == '_' || c == '-'; });
}

bool is_valid_topic_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxTopicNameLength) return false;
  if (name.front() == '/' || name.back() == '/' || name.find("//") != std::string_view::npos)
    return false;
  return std::ranges::all_of(
      name, [](char c) { return is_alnum(c) || c == '_' || c == '/' || c == '.' || c == '-'; });
}

bool is_reserved_type_name(std::string_view name) noexcept {
  return parse_scalar(name).has_value() || name == "char" || name == "bytes" || name == "string";
}

bool is_valid_type_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxTypeNameLength) return false;
  if (!is_alpha(name.front()) && name.front() != '_') return false;
  return std::ranges::all_of(name, [](char c) {
    return is_alnum(c) || c == '_' || c == ':' || c == '/' || c == '.' || c == '-';
  });
}

bool is_valid_field_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxTypeNameLength) return false;
  if (!is_alpha(name.front()) && name.front() != '_') return false;
  return std::ranges::all_of(name, [](char c) { return is_alnum(c) || c == '_'; });
}

bool is_ros2_message_name(std::string_view name) noexcept {
  const auto first = name.find('/');
  const auto last = name.rfind('/');
  if (first == std::string_view::npos || name.substr(first, last - first + 1) != "/msg/")
    return false;
  const auto part = [](std::string_view p) {
    return !p.empty() && is_alpha(p.front()) &&
           std::ranges::all_of(p, [](char c) { return is_alnum(c) || c == '_'; });
  };
  return part(name.substr(0, first)) && part(name.substr(last + 1));
}

}  // namespace ferry::config
