// The layout fingerprint of a type, and the first difference of two.

#include "ferry/config/layout_fingerprint.hpp"

#include <vector>

namespace ferry::config {

namespace {

// The field's type as a canonical word (no spaces, whatever the YAML wrote).
std::string type_word(const Schema& schema, const Field& f) {
  // The bound is part of the word: String<32> differs from String<64>.
  const std::string count = (f.sequence ? "[<=" : "[") + std::to_string(f.count) + "]";
  const bool brackets = f.is_array || f.sequence;
  switch (f.kind) {
    case FieldKind::Scalar:
      return std::string(to_string(f.scalar)) + (brackets ? count : "");
    case FieldKind::String:
      return "char" + count;
    case FieldKind::BoundedString:
      return "string<=" + std::to_string(f.count);
    case FieldKind::Nested:
      return schema.type(f.nested).name + (brackets ? count : "");
  }
  return "?";
}

// Appends the entries of `type` at `base`; false once `out` is too long.
bool append_entries(const Schema& schema, const Type& type, const std::string& prefix,
                    std::uint64_t base, std::string& out) {
  for (const Field& f : type.fields) {
    const std::string path = prefix + f.name;
    if (!out.empty()) out += ' ';
    out += path + ':' + type_word(schema, f) + '@' + std::to_string(base + f.offset);
    if (out.size() > kMaxLayoutFingerprint) return false;
    if (f.kind != FieldKind::Nested) continue;
    const std::string inner = path + (f.is_array || f.sequence ? "[]." : ".");
    if (!append_entries(schema, schema.type(f.nested), inner, base + f.offset + f.data_offset, out))
      return false;
  }
  return true;
}

struct Entry {
  std::string_view path;
  std::string_view type;
  std::string_view offset;
};

// Entries of a fingerprint; a malformed word (only a hostile client sends
// one) is kept whole as a path with no type, so it simply differs.
std::vector<Entry> entries(std::string_view text) {
  std::vector<Entry> out;
  while (!text.empty()) {
    const auto space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (word.empty()) continue;
    const auto colon = word.find(':');
    const auto at = word.rfind('@');
    if (colon == std::string_view::npos || at == std::string_view::npos || at < colon) {
      out.push_back({word, {}, {}});
      continue;
    }
    out.push_back(
        {word.substr(0, colon), word.substr(colon + 1, at - colon - 1), word.substr(at + 1)});
  }
  return out;
}

std::string describe(const Entry& e) {
  return std::string(e.type) + " at offset " + std::string(e.offset);
}

}  // namespace

std::optional<std::string> layout_fingerprint(const Schema& schema, std::size_t type) {
  const Type& t = schema.type(type);
  if (t.kind == TypeKind::Opaque) return std::nullopt;
  std::string out;
  if (!append_entries(schema, t, "", 0, out)) return std::nullopt;
  return out;
}

std::optional<std::string> first_layout_difference(std::string_view port, std::string_view topic) {
  const std::vector<Entry> ours = entries(port);
  const std::vector<Entry> theirs = entries(topic);
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    const Entry& want = theirs[i];
    if (i < ours.size() && ours[i].path == want.path && ours[i].type == want.type &&
        ours[i].offset == want.offset) {
      continue;
    }
    const Entry* same_name = nullptr;
    for (const Entry& e : ours) {
      if (e.path == want.path) same_name = &e;
    }
    if (same_name == nullptr) {
      return "the topic's field '" + std::string(want.path) + "' (" + describe(want) +
             ") is missing from the port's type" +
             (i < ours.size() ? ", which has '" + std::string(ours[i].path) + "' there" : "");
    }
    return "field '" + std::string(want.path) + "' is " + describe(*same_name) +
           " in the port's type but " + describe(want) + " in the topic's" +
           (i < ours.size() && ours[i].path != want.path
                ? " (the port's type has '" + std::string(ours[i].path) + "' there)"
                : "");
  }
  if (ours.size() > theirs.size()) {
    return "the port's type has a field '" + std::string(ours[theirs.size()].path) +
           "' that the topic's type does not";
  }
  return std::nullopt;
}

}  // namespace ferry::config
