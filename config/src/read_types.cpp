// `types:`: struct types with `fields:`, opaque types with `size:`/`align:`.

#include <cstdint>

#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "readers.hpp"

namespace ferry::config::detail {

namespace {
const std::vector<std::string_view> kTypeKeys{"fields", "size", "align", "ros2"};
const std::vector<std::string_view> kFieldKeys{"name", "type"};
constexpr std::string_view kFieldExample = "{ name: x, type: f64 }";

TypeDecl placeholder(std::string name, SourcePos pos) {
  TypeDecl d;
  d.name = std::move(name);
  d.pos = pos;
  d.opaque_size = 1;
  return d;
}

// Fields that are malformed are left out (and reported); nullopt when the
// list itself is unusable.
std::optional<std::vector<FieldDecl>> read_fields(Reader& reader, const Entry& fields,
                                                  std::string_view type_name) {
  if (!reader.expect_list(fields.value, fields.value_pos, "'fields' of type " + quote(type_name),
                          "[" + std::string(kFieldExample) + "]"))
    return std::nullopt;
  std::vector<FieldDecl> out;
  std::size_t index = 0;
  for (const YAML::Node& item : fields.value) {
    ++index;
    const SourcePos item_pos = item.IsNull() ? fields.value_pos : pos_of(item);
    const std::string what = "field " + std::to_string(index) + " of type " + quote(type_name);
    if (!reader.expect_map(item, item_pos, what, kFieldExample)) continue;
    const std::size_t errors = reader.error_count();
    const auto entries = reader.entries(item, "in " + what, kFieldKeys);
    FieldDecl field;
    const Entry* name = find(entries, "name");
    const Entry* type = find(entries, "type");
    if (name) {
      if (auto s = reader.string(*name)) field.name = *s;
      field.name_pos = name->value_pos;
    } else {
      reader.error(item_pos, what + " has no 'name'; expected " + std::string(kFieldExample));
    }
    if (type) {
      if (auto s = reader.string(*type)) field.type = *s;
      field.type_pos = type->value_pos;
    } else {
      reader.error(item_pos, what + " has no 'type'; expected " + std::string(kFieldExample));
    }
    if (reader.error_count() == errors) out.push_back(std::move(field));
  }
  return out;
}

TypeDecl read_type(Reader& reader, const Entry& t) {
  const std::string where = "in type " + quote(t.key);
  if (!reader.expect_map(t.value, t.value_pos, "type " + quote(t.key),
                         "{ fields: [...] } or { size: 256 }"))
    return placeholder(t.key, t.key_pos);
  const std::size_t errors = reader.error_count();
  const auto entries = reader.entries(t.value, where, kTypeKeys);
  const Entry* fields = find(entries, "fields");
  const Entry* size = find(entries, "size");
  const Entry* align = find(entries, "align");
  if (fields && size) {
    reader.error(size->key_pos, "type " + quote(t.key) +
                                    " has both 'fields' and 'size'; expected 'fields' for a "
                                    "struct or 'size' for an opaque type, not both");
    return placeholder(t.key, t.key_pos);
  }
  if (!fields && !size) {
    reader.error(t.key_pos, "type " + quote(t.key) +
                                " has neither 'fields' nor 'size'; expected 'fields' for a struct "
                                "or 'size' for an opaque type");
    return placeholder(t.key, t.key_pos);
  }
  TypeDecl d;
  d.name = t.key;
  d.pos = t.key_pos;
  if (const Entry* ros2 = find(entries, "ros2")) {
    if (auto s = reader.string(*ros2)) {
      if (is_ros2_message_name(*s)) {
        d.ros2 = *s;
      } else {
        reader.error(ros2->value_pos, "invalid ROS 2 name " + quote(*s) + " of type " +
                                          quote(t.key) +
                                          "; expected pkg/msg/Name, e.g. sensor_msgs/msg/Image");
      }
    }
  }
  if (size) {
    const auto bytes = reader.size(*size, 0, UINT64_MAX);
    if (!bytes) return placeholder(t.key, t.key_pos);
    d.opaque_size = bytes;
    d.size_pos = size->value_pos;
    d.align_pos = align ? align->value_pos : size->value_pos;
    if (align) d.opaque_align = reader.integer(*align, 1, kMaxAlign).value_or(1);
    return d;
  }
  if (align)
    reader.error(align->key_pos, "'align' " + where +
                                     " is only for opaque types; expected 'align' next to 'size' "
                                     "(a struct's alignment follows from its fields)");
  auto list = read_fields(reader, *fields, t.key);
  // Nothing usable to lay out: do not report the type again as empty.
  if (!list || (list->empty() && reader.error_count() != errors))
    return placeholder(t.key, t.key_pos);
  d.fields = std::move(*list);
  return d;
}
}  // namespace

std::vector<TypeDecl> read_types(Reader& reader, const Entry& types) {
  if (!reader.expect_map(types.value, types.value_pos, "'types'",
                         "{ Pose: { fields: [...] }, Blob: { size: 256 } }"))
    return {};
  std::vector<TypeDecl> out;
  for (const Entry& t : reader.all_entries(types.value)) out.push_back(read_type(reader, t));
  return out;
}

}  // namespace ferry::config::detail
