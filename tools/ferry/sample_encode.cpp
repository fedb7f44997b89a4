// Encoding a YAML/JSON flow map into a sample's bytes, checked against the
// type schema.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "sample_codec.hpp"

namespace ferry::cli {

namespace {

using config::Field;
using config::FieldKind;
using config::Scalar;

using Result = std::expected<void, std::string>;

std::unexpected<std::string> fail(const std::string& path, const std::string& what) {
  return std::unexpected(fmt::format("field '{}': {}", path, what));
}

std::string describe(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (node.IsNull()) return "nothing";
  if (node.Tag() == "!") return fmt::format("the string \"{}\"", node.Scalar());
  return fmt::format("'{}'", node.Scalar());
}

// A plain (unquoted) scalar: numbers and booleans must not be quoted.
bool plain_scalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

template <class T>
void store(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof value);
}

// Integer text: optional sign, decimal or 0x hexadecimal.
template <class T>
std::expected<T, std::string> parse_integer(std::string_view text, Scalar scalar) {
  const auto range = [&] {
    return fmt::format("out of range for {} ({}..{})", to_string(scalar),
                       +std::numeric_limits<T>::min(), +std::numeric_limits<T>::max());
  };
  bool negative = false;
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  std::uint64_t magnitude = 0;
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (digits.empty() || end != digits.data() + digits.size() ||
      (ec != std::errc{} && ec != std::errc::result_out_of_range)) {
    return std::unexpected(
        fmt::format("expected an integer ({}), got '{}'", to_string(scalar), text));
  }
  if (ec == std::errc::result_out_of_range) return std::unexpected(range());
  if constexpr (std::is_signed_v<T>) {
    const auto limit = negative ? std::uint64_t{1} << (sizeof(T) * 8 - 1)
                                : static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    if (magnitude > limit) return std::unexpected(range());
    if (negative) {
      // -magnitude without overflowing at the minimum.
      return static_cast<T>(-static_cast<std::int64_t>(magnitude - 1) - 1);
    }
    return static_cast<T>(magnitude);
  } else {
    if (negative && magnitude != 0) return std::unexpected(range());
    if (magnitude > std::numeric_limits<T>::max()) return std::unexpected(range());
    return static_cast<T>(magnitude);
  }
}

std::expected<double, std::string> parse_float(std::string_view text, Scalar scalar) {
  for (std::string_view inf : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}) {
    if (text == inf) return std::numeric_limits<double>::infinity();
  }
  for (std::string_view inf : {"-.inf", "-.Inf", "-.INF"}) {
    if (text == inf) return -std::numeric_limits<double>::infinity();
  }
  for (std::string_view nan : {".nan", ".NaN", ".NAN"}) {
    if (text == nan) return std::numeric_limits<double>::quiet_NaN();
  }
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || end != digits.data() + digits.size() || std::isnan(value) ||
      std::isinf(value) || (ec != std::errc{} && ec != std::errc::result_out_of_range)) {
    return std::unexpected(
        fmt::format("expected a number ({}), got '{}'", to_string(scalar), text));
  }
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves `value` alone: strtod tells overflow (a mistake)
    // from underflow (rounds to zero).
    const double rounded = std::strtod(std::string(digits).c_str(), nullptr);
    if (std::isinf(rounded))
      return std::unexpected(fmt::format("out of range for {}", to_string(scalar)));
    value = rounded;
  }
  if (scalar == Scalar::F32 && std::fabs(value) > FLT_MAX) {
    return std::unexpected(fmt::format("out of range for f32 (at most {})", FLT_MAX));
  }
  return value;
}

template <class T>
Result put_integer(const YAML::Node& node, Scalar scalar, std::byte* at, const std::string& path) {
  auto v = parse_integer<T>(node.Scalar(), scalar);
  if (!v) return fail(path, v.error());
  store<T>(at, *v);
  return {};
}

Result put_scalar(Scalar scalar, const YAML::Node& node, std::byte* at, const std::string& path) {
  if (!plain_scalar(node)) {
    return fail(path, fmt::format("expected {}, got {}",
                                  scalar == Scalar::Bool ? "true or false" : to_string(scalar),
                                  describe(node)));
  }
  const std::string& text = node.Scalar();
  switch (scalar) {
    case Scalar::Bool:
      if (text == "true" || text == "True" || text == "TRUE") {
        store<std::uint8_t>(at, 1);
      } else if (text == "false" || text == "False" || text == "FALSE") {
        store<std::uint8_t>(at, 0);
      } else {
        return fail(path, fmt::format("expected true or false, got '{}'", text));
      }
      return {};
    case Scalar::I8:
      return put_integer<std::int8_t>(node, scalar, at, path);
    case Scalar::I16:
      return put_integer<std::int16_t>(node, scalar, at, path);
    case Scalar::I32:
      return put_integer<std::int32_t>(node, scalar, at, path);
    case Scalar::I64:
      return put_integer<std::int64_t>(node, scalar, at, path);
    case Scalar::U8:
      return put_integer<std::uint8_t>(node, scalar, at, path);
    case Scalar::U16:
      return put_integer<std::uint16_t>(node, scalar, at, path);
    case Scalar::U32:
      return put_integer<std::uint32_t>(node, scalar, at, path);
    case Scalar::U64:
      return put_integer<std::uint64_t>(node, scalar, at, path);
    case Scalar::F32:
    case Scalar::F64: {
      auto v = parse_float(text, scalar);
      if (!v) return fail(path, v.error());
      if (scalar == Scalar::F32) {
        store<float>(at, static_cast<float>(*v));
      } else {
        store<double>(at, *v);
      }
      return {};
    }
  }
  return fail(path, "unknown scalar type");
}

Result put_struct(const config::Schema& schema, const config::Type& type, const YAML::Node& node,
                  std::byte* base, const std::string& path);

Result put_element(const config::Schema& schema, const Field& f, const YAML::Node& node,
                   std::byte* at, const std::string& path) {
  if (f.kind == FieldKind::Nested) return put_struct(schema, schema.type(f.nested), node, at, path);
  return put_scalar(f.scalar, node, at, path);
}

Result put_field(const config::Schema& schema, const Field& f, const YAML::Node& node,
                 std::byte* base, const std::string& path) {
  std::byte* at = base + f.offset;
  if (f.kind == FieldKind::String) {
    if (!node.IsScalar())
      return fail(path, fmt::format("expected a string ({}), got {}", f.type_text, describe(node)));
    const std::string& text = node.Scalar();
    if (text.size() >= f.count) {
      return fail(path, fmt::format("\"{}\" is {} characters; a {} holds at most {}", text,
                                    text.size(), f.type_text, f.count - 1));
    }
    std::memcpy(at, text.data(), text.size());
    return {};
  }
  if (f.kind == FieldKind::BoundedString) {
    if (!node.IsScalar())
      return fail(path, fmt::format("expected a string ({}), got {}", f.type_text, describe(node)));
    const std::string& text = node.Scalar();
    if (text.size() > f.count) {
      return fail(path, fmt::format("\"{}\" is {} bytes; a {} holds at most {}", text, text.size(),
                                    f.type_text, f.count));
    }
    const auto length = static_cast<std::uint32_t>(text.size());
    std::memcpy(at, &length, sizeof length);
    if (!text.empty()) std::memcpy(at + f.data_offset, text.data(), text.size());
    return {};
  }
  if (!f.is_array && !f.sequence) return put_element(schema, f, node, at, path);
  if (!node.IsSequence()) {
    return fail(path, fmt::format("expected a list ({}), got {}", f.type_text, describe(node)));
  }
  if (node.size() > f.count) {
    return fail(path, fmt::format("{} elements given; a {} holds {}{}", node.size(), f.type_text,
                                  f.sequence ? "at most " : "", f.count));
  }
  if (f.sequence) {
    const auto length = static_cast<std::uint32_t>(node.size());
    std::memcpy(at, &length, sizeof length);
    at += f.data_offset;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto done =
        put_element(schema, f, node[i], at + i * f.element_size, fmt::format("{}[{}]", path, i));
    if (!done) return done;
  }
  return {};
}

Result put_struct(const config::Schema& schema, const config::Type& type, const YAML::Node& node,
                  std::byte* base, const std::string& path) {
  if (node.IsNull()) return {};  // all zeros
  const auto where = [&] {
    return path.empty() ? std::string("VALUE") : fmt::format("field '{}'", path);
  };
  if (type.kind == config::TypeKind::Opaque) {
    if (node.IsMap() && node.size() == 0) return {};
    return std::unexpected(
        fmt::format("{}: type '{}' is opaque ({} bytes, no fields); only {{}} "
                    "(all zeros) can be published",
                    where(), type.name, type.size));
  }
  if (!node.IsMap()) {
    return std::unexpected(fmt::format(
        "{}: expected a map of the fields of '{}', e.g. '{{{}: ...}}', got {}", where(), type.name,
        type.fields.empty() ? "field" : type.fields.front().name, describe(node)));
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    const Field* field = nullptr;
    for (const Field& f : type.fields) {
      if (f.name == key) field = &f;
    }
    const std::string field_path = path.empty() ? key : path + "." + key;
    if (field == nullptr) {
      std::string names;
      for (const Field& f : type.fields) names += (names.empty() ? "" : ", ") + f.name;
      return std::unexpected(fmt::format("unknown field '{}' in type '{}'; its fields are {}",
                                         field_path, type.name, names));
    }
    auto done = put_field(schema, *field, entry.second, base, field_path);
    if (!done) return done;
  }
  return {};
}

}  // namespace

std::expected<YAML::Node, std::string> parse_value(std::string_view text) {
  try {
    // YAML::Load, not LoadAll: LoadAll loops forever on some malformed input
    // in yaml-cpp 0.7.
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return std::unexpected(
        fmt::format("VALUE is not valid YAML or JSON (column {}: {})", e.mark.column + 1, e.msg));
  }
}

std::expected<std::vector<std::byte>, std::string> encode_sample(const config::Schema& schema,
                                                                 const config::Type& type,
                                                                 const YAML::Node& value) {
  std::vector<std::byte> bytes(type.size, std::byte{0});
  auto done = put_struct(schema, type, value, bytes.data(), "");
  if (!done) return std::unexpected(done.error());
  return bytes;
}

}  // namespace ferry::cli
