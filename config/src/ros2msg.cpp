// ros2msg: the schema name and .msg text of a ferry type (docs/record-replay.md).

#include "ferry/config/ros2msg.hpp"

#include <vector>

namespace ferry::config {

namespace {

std::string_view ros2_scalar(Scalar scalar) noexcept {
  switch (scalar) {
    case Scalar::Bool:
      return "bool";
    case Scalar::I8:
      return "int8";
    case Scalar::I16:
      return "int16";
    case Scalar::I32:
      return "int32";
    case Scalar::I64:
      return "int64";
    case Scalar::U8:
      return "uint8";
    case Scalar::U16:
      return "uint16";
    case Scalar::U32:
      return "uint32";
    case Scalar::U64:
      return "uint64";
    case Scalar::F32:
      return "float32";
    case Scalar::F64:
      return "float64";
  }
  return "uint8";
}

std::string array_suffix(std::uint64_t count) { return "[" + std::to_string(count) + "]"; }

// A bounded sequence is ROS 2's unbounded one ("T[]"): the bound is
// ferry's, and what ROS 2 and its tools expect is the unbounded type.
std::string suffix(const Field& field) {
  if (field.sequence) return "[]";
  return field.is_array ? array_suffix(field.count) : "";
}

std::string field_type(const Schema& schema, const Field& field) {
  switch (field.kind) {
    case FieldKind::Scalar:
      return std::string(ros2_scalar(field.scalar)) + suffix(field);
    case FieldKind::String:
      return "uint8" + array_suffix(field.count);
    case FieldKind::BoundedString:
      return "string";
    case FieldKind::Nested: {
      const Type& nested = schema.type(field.nested);
      // An opaque type has no fields for ROS 2 to see: its bytes, as one array.
      if (nested.kind == TypeKind::Opaque) {
        return field.sequence ? "uint8[]" : "uint8" + array_suffix(field.size);
      }
      return ros2_type_name(schema, field.nested) + suffix(field);
    }
  }
  return "uint8";
}

void append_fields(const Schema& schema, const Type& type, std::string& out) {
  if (type.kind == TypeKind::Opaque) {
    out += "uint8" + array_suffix(type.size) + " data\n";
    return;
  }
  for (const Field& f : type.fields) out += field_type(schema, f) + " " + f.name + "\n";
}

// Nested struct types used by `type`, depth first, each once.
void collect_dependencies(const Schema& schema, std::size_t type, std::vector<bool>& seen,
                          std::vector<std::size_t>& order) {
  for (const Field& f : schema.type(type).fields) {
    if (f.kind != FieldKind::Nested || seen[f.nested]) continue;
    if (schema.type(f.nested).kind == TypeKind::Opaque) continue;
    seen[f.nested] = true;
    order.push_back(f.nested);
    collect_dependencies(schema, f.nested, seen, order);
  }
}

}  // namespace

std::string ros2_type_name(std::string_view ferry_type) {
  const auto slash = ferry_type.rfind('/');
  if (slash == std::string_view::npos) return "ferry/msg/" + std::string(ferry_type);
  const std::string_view package = ferry_type.substr(0, slash);
  if (package.ends_with("/msg")) return std::string(ferry_type);
  return std::string(package) + "/msg/" + std::string(ferry_type.substr(slash + 1));
}

std::string ros2_type_name(const Schema& schema, std::size_t type) {
  const Type& t = schema.type(type);
  return t.ros2.empty() ? ros2_type_name(t.name) : t.ros2;
}

std::string ros2msg_definition(const Schema& schema, std::size_t type) {
  std::string out;
  append_fields(schema, schema.type(type), out);
  std::vector<bool> seen(schema.types().size(), false);
  seen[type] = true;
  std::vector<std::size_t> dependencies;
  collect_dependencies(schema, type, seen, dependencies);
  for (const std::size_t d : dependencies) {
    out += std::string(80, '=') + "\n";
    out += "MSG: " + ros2_type_name(schema, d) + "\n";
    append_fields(schema, schema.type(d), out);
  }
  return out;
}

std::string ros2msg_bytes_definition() { return "uint8[] data\n"; }

std::string ros2_bytes_type_name() { return "ferry/msg/Bytes"; }

}  // namespace ferry::config
