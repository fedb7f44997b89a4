#include "yaml_reader.hpp"

#include <algorithm>

#include "ferry/config/units.hpp"
#include "suggest.hpp"

namespace ferry::config::detail {

namespace {
// yaml-cpp tags a quoted scalar "!" and a plain one "?": "64" is a string.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!"; }

bool is_missing(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

std::string describe(const YAML::Node& node) {
  if (is_missing(node)) return "no value";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (is_quoted(node)) return "the string \"" + node.Scalar() + "\"";
  return quote(node.Scalar());
}

std::string range(std::uint64_t min, std::uint64_t max) {
  return "from " + std::to_string(min) + " to " + std::to_string(max);
}
}  // namespace

SourcePos pos_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {};
  return SourcePos{static_cast<std::size_t>(mark.line) + 1,
                   static_cast<std::size_t>(mark.column) + 1};
}

std::string to_string(SourcePos pos) {
  return std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

const Entry* find(const std::vector<Entry>& entries, std::string_view key) {
  const auto it = std::ranges::find(entries, key, &Entry::key);
  return it == entries.end() ? nullptr : &*it;
}

void Reader::error(SourcePos pos, std::string message) {
  out_.push_back(Diagnostic{file_, pos.line, pos.column, std::move(message)});
}

void Reader::wrong_type(const YAML::Node& node, SourcePos pos, std::string_view what,
                        std::string_view expected) {
  if (is_missing(node)) {
    error(pos, std::string(what) + " has no value; expected " + std::string(expected));
  } else {
    error(pos, "wrong type for " + std::string(what) + ": got " + describe(node) + "; expected " +
                   std::string(expected));
  }
}

bool Reader::expect_map(const YAML::Node& node, SourcePos pos, std::string_view what,
                        std::string_view example) {
  if (node.IsMap()) return true;
  std::string expected = "a map";
  if (!example.empty()) expected += " like " + std::string(example);
  wrong_type(node, pos, what, expected);
  return false;
}

bool Reader::expect_list(const YAML::Node& node, SourcePos pos, std::string_view what,
                         std::string_view example) {
  if (node.IsSequence()) return true;
  std::string expected = "a list";
  if (!example.empty()) expected += " like " + std::string(example);
  wrong_type(node, pos, what, expected);
  return false;
}

bool Reader::expect_scalar(const Entry& e, std::string_view expected) {
  if (e.value.IsScalar()) return true;
  wrong_type(e.value, e.value_pos, quote(e.key), expected);
  return false;
}

std::vector<Entry> Reader::all_entries(const YAML::Node& map) {
  std::vector<Entry> out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    const SourcePos key_pos = pos_of(key);
    if (!key.IsScalar()) {
      error(key_pos, "a key is " + describe(key) + "; expected a plain word as key");
      continue;
    }
    out.push_back(Entry{key.Scalar(), value, key_pos, is_missing(value) ? key_pos : pos_of(value)});
  }
  return out;
}

std::vector<Entry> Reader::entries(const YAML::Node& map, std::string_view where,
                                   const std::vector<std::string_view>& keys) {
  std::vector<Entry> out;
  for (Entry& e : all_entries(map)) {
    if (std::ranges::find(keys, e.key) == keys.end()) {
      std::string message = "unknown key " + quote(e.key) + " " + std::string(where);
      if (const auto guess = closest(e.key, keys)) {
        message += "; did you mean " + quote(*guess) + "?";
      } else {
        message += "; expected one of: " + join(keys);
      }
      error(e.key_pos, std::move(message));
    } else if (const Entry* first = find(out, e.key)) {
      error(e.key_pos, "duplicate key " + quote(e.key) + " " + std::string(where) +
                           "; first given at " + to_string(first->key_pos));
    } else {
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::optional<std::uint64_t> Reader::integer(const Entry& e, std::uint64_t min, std::uint64_t max) {
  const std::string expected = "an integer " + range(min, max);
  if (!expect_scalar(e, expected)) return std::nullopt;
  const std::string& text = e.value.Scalar();
  if (is_quoted(e.value)) {
    error(e.value_pos, "wrong type for " + quote(e.key) + ": got " + describe(e.value) +
                           "; expected " + expected + " (without quotes)");
    return std::nullopt;
  }
  const bool negative = text.starts_with('-');
  const std::string_view digits = std::string_view(text).substr(negative ? 1 : 0);
  std::uint64_t value = 0;
  bool overflow = false;
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      error(e.value_pos, "wrong type for " + quote(e.key) + ": got " + describe(e.value) +
                             "; expected " + expected);
      return std::nullopt;
    }
    overflow = overflow || __builtin_mul_overflow(value, 10U, &value) ||
               __builtin_add_overflow(value, static_cast<std::uint64_t>(c - '0'), &value);
  }
  if (digits.empty()) {
    error(e.value_pos, "wrong type for " + quote(e.key) + ": got " + describe(e.value) +
                           "; expected " + expected);
    return std::nullopt;
  }
  if (negative || overflow || value < min || value > max) {
    error(e.value_pos, quote(e.key) + " is " + text + ", out of range; expected " + expected);
    return std::nullopt;
  }
  return value;
}

std::optional<std::uint64_t> Reader::size(const Entry& e, std::uint64_t min, std::uint64_t max) {
  constexpr std::string_view kExpected =
      "a size in bytes, as an integer or with B, KiB, MiB or GiB (e.g. 4096, 64KiB, 4MiB)";
  if (!expect_scalar(e, kExpected)) return std::nullopt;
  const auto value = parse_size(e.value.Scalar());
  if (!value) {
    error(e.value_pos, "invalid size " + quote(e.value.Scalar()) + " for " + quote(e.key) +
                           "; expected " + std::string(kExpected));
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    error(e.value_pos, quote(e.key) + " is " + e.value.Scalar() + ", out of range; expected " +
                           format_size(min) + " to " + format_size(max));
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> Reader::string(const Entry& e) {
  if (!expect_scalar(e, "a string")) return std::nullopt;
  return e.value.Scalar();
}

std::optional<bool> Reader::boolean(const Entry& e) {
  constexpr std::string_view kExpected = "true or false";
  if (!expect_scalar(e, kExpected)) return std::nullopt;
  const std::string& text = e.value.Scalar();
  if (!is_quoted(e.value)) {
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
  }
  error(e.value_pos, "wrong type for " + quote(e.key) + ": got " + describe(e.value) +
                         "; expected " + std::string(kExpected));
  return std::nullopt;
}

std::optional<Policy> Reader::policy(const Entry& e) {
  const std::string expected = "one of " + std::string(kPolicyList);
  if (!expect_scalar(e, expected)) return std::nullopt;
  if (const auto p = parse_policy(e.value.Scalar())) return p;
  error(e.value_pos, "unknown policy " + quote(e.value.Scalar()) + "; expected " + expected);
  return std::nullopt;
}

std::optional<std::vector<std::string>> Reader::string_list(const Entry& e) {
  if (!expect_list(e.value, e.value_pos, quote(e.key), "[alice, robots]")) return std::nullopt;
  std::vector<std::string> out;
  bool ok = true;
  std::size_t index = 0;
  for (const YAML::Node& item : e.value) {
    ++index;
    if (!item.IsScalar() || item.Scalar().empty()) {
      const SourcePos pos = is_missing(item) ? e.value_pos : pos_of(item);
      wrong_type(item, pos, "item " + std::to_string(index) + " of " + quote(e.key),
                 "a user or group name");
      ok = false;
      continue;
    }
    out.push_back(item.Scalar());
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace ferry::config::detail
