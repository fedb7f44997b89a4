// Decoding a sample's bytes with the type schema, and printing the result.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "sample_codec.hpp"

namespace ferry::cli {

namespace {

using config::Field;
using config::FieldKind;
using config::Scalar;

template <class T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

Json float_value(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  return value;
}

Json scalar_value(Scalar scalar, const std::byte* at) {
  switch (scalar) {
    case Scalar::Bool:
      return load<std::uint8_t>(at) != 0;
    case Scalar::I8:
      return load<std::int8_t>(at);
    case Scalar::I16:
      return load<std::int16_t>(at);
    case Scalar::I32:
      return load<std::int32_t>(at);
    case Scalar::I64:
      return load<std::int64_t>(at);
    case Scalar::U8:
      return load<std::uint8_t>(at);
    case Scalar::U16:
      return load<std::uint16_t>(at);
    case Scalar::U32:
      return load<std::uint32_t>(at);
    case Scalar::U64:
      return load<std::uint64_t>(at);
    case Scalar::F32: {
      const float f = load<float>(at);
      if (!std::isfinite(f)) return float_value(f);
      // The shortest decimal that reads back as this float, as a double:
      // 0.1f prints as 0.1, not 0.10000000149011612.
      return float_value(std::stod(fmt::format("{}", f)));
    }
    case Scalar::F64:
      return float_value(load<double>(at));
  }
  return nullptr;
}

std::string hex(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) out += fmt::format("{:02x}", std::to_integer<unsigned>(b));
  return out;
}

Json decode_struct(const config::Schema& schema, const config::Type& type, const std::byte* base,
                   bool full);

Json element(const config::Schema& schema, const Field& f, const std::byte* at, bool full) {
  if (f.kind == FieldKind::Nested) return decode_struct(schema, schema.type(f.nested), at, full);
  return scalar_value(f.scalar, at);
}

// A length written in the sample, never more than the bound (the sample
// comes from shared memory: it is not trusted).
std::uint64_t used_length(const Field& f, const std::byte* at) {
  return std::min<std::uint64_t>(load<std::uint32_t>(at), f.count);
}

Json field_value(const config::Schema& schema, const Field& f, const std::byte* base, bool full) {
  const std::byte* at = base + f.offset;
  if (f.kind == FieldKind::String) {
    const char* chars = reinterpret_cast<const char*>(at);
    return std::string(chars, ::strnlen(chars, f.count));
  }
  if (f.kind == FieldKind::BoundedString) {
    return std::string(reinterpret_cast<const char*>(at + f.data_offset), used_length(f, at));
  }
  if (!f.is_array && !f.sequence) return element(schema, f, at, full);
  std::uint64_t count = f.count;
  std::uint64_t bytes = f.size;
  if (f.sequence) {
    count = used_length(f, at);
    bytes = count * f.element_size;
    at += f.data_offset;
  }
  if (count > kMaxArrayShown && !full) {
    if (f.kind == FieldKind::Scalar && (f.scalar == Scalar::U8 || f.scalar == Scalar::I8)) {
      return decode_opaque(std::span<const std::byte>(at, bytes));
    }
    Json head = Json::array();
    for (std::uint64_t i = 0; i < kArrayHead; ++i) {
      head.push_back(element(schema, f, at + i * f.element_size, full));
    }
    return Json{{"count", count}, {"head", std::move(head)}};
  }
  Json items = Json::array();
  for (std::uint64_t i = 0; i < count; ++i) {
    items.push_back(element(schema, f, at + i * f.element_size, full));
  }
  return items;
}

Json decode_struct(const config::Schema& schema, const config::Type& type, const std::byte* base,
                   bool full) {
  if (type.kind == config::TypeKind::Opaque) {
    return decode_opaque(std::span<const std::byte>(base, type.size));
  }
  Json out = Json::object();
  for (const Field& f : type.fields) out[f.name] = field_value(schema, f, base, full);
  return out;
}

// ---- YAML-like text ------------------------------------------------------------

bool is_scalar(const Json& v) { return !v.is_object() && !v.is_array(); }

std::string scalar_text(const Json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == ".nan" || s == ".inf" || s == "-.inf") return s;  // float specials, unquoted
  }
  return to_json_line(v);  // a double-quoted JSON string is a valid YAML string
}

void render(const Json& v, int indent, std::string& out);

void render_entry(std::string_view key_prefix, const Json& v, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (is_scalar(v)) {
    out += fmt::format("{}{} {}\n", pad, key_prefix, scalar_text(v));
  } else if (v.is_array() && std::all_of(v.begin(), v.end(), is_scalar)) {
    std::string items;
    for (const auto& item : v) items += (items.empty() ? "" : ", ") + scalar_text(item);
    out += fmt::format("{}{} [{}]\n", pad, key_prefix, items);
  } else if (v.empty()) {
    out += fmt::format("{}{} {}\n", pad, key_prefix, v.is_array() ? "[]" : "{}");
  } else {
    out += fmt::format("{}{}\n", pad, key_prefix);
    render(v, indent + 2, out);
  }
}

void render(const Json& v, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (v.is_object()) {
    for (const auto& [key, value] : v.items()) render_entry(key + ":", value, indent, out);
    return;
  }
  for (const auto& item : v) {
    if (item.is_object() && !item.empty()) {
      // "- first: 1" then the other keys aligned under "first".
      std::string nested;
      render(item, indent + 2, nested);
      nested.replace(static_cast<std::size_t>(indent), 2, "- ");
      out += nested;
    } else {
      render_entry("-", item, indent, out);
    }
  }
}

}  // namespace

Json decode_opaque(std::span<const std::byte> bytes) {
  return Json{{"size", bytes.size()},
              {"hex", hex(bytes.first(std::min(bytes.size(), kHexPrefix)))}};
}

Json decode_sample(const config::Schema& schema, const config::Type& type,
                   std::span<const std::byte> bytes, bool full) {
  if (bytes.size() < type.size) return decode_opaque(bytes);
  return decode_struct(schema, type, bytes.data(), full);
}

std::string to_json_line(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string to_yaml_text(const Json& sample) {
  if (is_scalar(sample)) return scalar_text(sample) + "\n";
  std::string out;
  render(sample, 0, out);
  return out;
}

}  // namespace ferry::cli
