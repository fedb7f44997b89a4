#include "field_type.hpp"

#include "quote.hpp"

namespace ferry::config::detail {

namespace {
std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

constexpr std::string_view kExpected = "expected T or T[N], e.g. u8, char[16], Pose[4]";
}  // namespace

std::expected<FieldTypeRef, std::string> parse_field_type(std::string_view text) {
  const std::string_view whole = trim(text);
  const std::size_t open = whole.find('[');
  if (open == std::string_view::npos) {
    if (whole.empty() || whole.find(']') != std::string_view::npos)
      return std::unexpected("invalid field type " + quote(text) + "; " + std::string(kExpected));
    return FieldTypeRef{whole, std::nullopt};
  }
  const std::string_view base = trim(whole.substr(0, open));
  const std::size_t close = whole.find(']', open);
  if (base.empty() || close == std::string_view::npos)
    return std::unexpected("invalid field type " + quote(text) + "; " + std::string(kExpected));
  if (close + 1 != whole.size()) {
    if (whole[close + 1] == '[')
      return std::unexpected("multi-dimensional array " + quote(text) +
                             " is not supported; expected T[N] (declare a type for the inner "
                             "array and make an array of it)");
    return std::unexpected("invalid field type " + quote(text) + "; " + std::string(kExpected));
  }
  const std::string_view digits = trim(whole.substr(open + 1, close - open - 1));
  std::uint64_t count = 0;
  bool overflow = false;
  for (const char c : digits) {
    if (c < '0' || c > '9')
      return std::unexpected("invalid array length in " + quote(text) +
                             "; expected a positive decimal integer N in T[N]");
    overflow = overflow || __builtin_mul_overflow(count, 10U, &count) ||
               __builtin_add_overflow(count, static_cast<std::uint64_t>(c - '0'), &count);
  }
  if (digits.empty())
    return std::unexpected("missing array length in " + quote(text) +
                           "; expected a positive decimal integer N in T[N]");
  if (overflow)
    return std::unexpected("array length in " + quote(text) +
                           " is too large; expected a length that keeps the type under 1 GiB");
  if (count == 0)
    return std::unexpected("array length 0 in " + quote(text) + "; expected at least 1");
  return FieldTypeRef{base, count};
}

}  // namespace ferry::config::detail
