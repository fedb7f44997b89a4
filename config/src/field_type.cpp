#include "field_type.hpp"

#include "quote.hpp"

namespace ferry::config::detail {

namespace {
std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

constexpr std::string_view kExpected =
    "expected T, T[N], T[<=N] or string<=N, e.g. u8, char[16], Pose[4], u8[<=1024], string<=64";

// The N of "[N]", "[<=N]" or "<=N" (`digits` without the brackets or "<=").
std::expected<std::uint64_t, std::string> parse_count(std::string_view digits,
                                                      std::string_view text, std::string_view form,
                                                      const std::string& what = "length") {
  std::uint64_t count = 0;
  bool overflow = false;
  for (const char c : digits) {
    if (c < '0' || c > '9')
      return std::unexpected("invalid " + what + " in " + quote(text) +
                             "; expected a positive decimal integer N in " + std::string(form));
    overflow = overflow || __builtin_mul_overflow(count, 10U, &count) ||
               __builtin_add_overflow(count, static_cast<std::uint64_t>(c - '0'), &count);
  }
  if (digits.empty())
    return std::unexpected("missing " + what + " in " + quote(text) +
                           "; expected a positive decimal integer N in " + std::string(form));
  // A bound is a uint32 length in the sample; a fixed array's size is
  // checked against the sample size limit where it is laid out.
  if (overflow || (form != "T[N]" && count > UINT32_MAX))
    return std::unexpected(what + " in " + quote(text) +
                           " is too large; expected a length that keeps the type under 1 GiB");
  if (count == 0) return std::unexpected(what + " 0 in " + quote(text) + "; expected at least 1");
  return count;
}
}  // namespace

std::expected<FieldTypeRef, std::string> parse_field_type(std::string_view text) {
  const std::string_view whole = trim(text);
  if (whole.starts_with("string") && whole.find('[') == std::string_view::npos) {
    std::string_view rest = trim(whole.substr(6));
    if (rest.empty())
      return std::unexpected("field type " + quote(text) +
                             " needs a bound; expected string<=N, e.g. string<=64 (at most N "
                             "bytes of UTF-8)");
    if (rest.starts_with("<=")) {
      const auto n = parse_count(trim(rest.substr(2)), text, "string<=N");
      if (!n) return std::unexpected(n.error());
      return FieldTypeRef{"string", *n, true};
    }
  }
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
  std::string_view digits = trim(whole.substr(open + 1, close - open - 1));
  if (digits.starts_with("<=")) {
    const auto n = parse_count(trim(digits.substr(2)), text, "T[<=N]");
    if (!n) return std::unexpected(n.error());
    return FieldTypeRef{base, *n, true};
  }
  if (digits.empty() && base == "string")
    return std::unexpected("field type " + quote(text) +
                           " has no bounds; expected string<=N, inside a declared type if a "
                           "sequence of strings is needed");
  if (digits.empty())
    return std::unexpected("missing array length in " + quote(text) +
                           "; expected T[N] (fixed) or T[<=N] (at most N elements)");
  const auto n = parse_count(digits, text, "T[N]", "array length");
  if (!n) return std::unexpected(n.error());
  return FieldTypeRef{base, *n, false};
}

}  // namespace ferry::config::detail
