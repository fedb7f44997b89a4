// build_schema: resolves field types and lays types out by the C ABI.

#include <unordered_map>

#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "ferry/config/schema.hpp"
#include "ferry/config/units.hpp"
#include "field_type.hpp"
#include "suggest.hpp"

namespace ferry::config {

namespace {
std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }
std::string at(SourcePos pos) {
  return std::to_string(pos.line) + ":" + std::to_string(pos.column);
}
std::uint64_t align_up(std::uint64_t value, std::uint64_t align) {
  return (value + align - 1) / align * align;
}
bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
const std::string kTooLarge = "over the " + format_size(kMaxSampleSize) + " limit";
}  // namespace

class SchemaBuilder {
 public:
  SchemaBuilder(std::span<const TypeDecl> decls, std::string_view file,
                std::vector<Diagnostic>& errors)
      : decls_(decls), file_(file), errors_(errors), state_(decls.size()), types_(decls.size()) {}

  Schema build() {
    check_type_names();
    for (std::size_t i = 0; i < decls_.size(); ++i) layout(i);
    return compact();
  }

 private:
  enum class State : std::uint8_t { Unvisited, Visiting, Ok, Bad };

  void report(SourcePos pos, std::string message) {
    errors_.push_back(Diagnostic{std::string(file_), pos.line, pos.column, std::move(message)});
  }

  // Duplicates and bad names are found before layout so that a field
  // naming a duplicate still resolves to the first declaration.
  void check_type_names() {
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      const TypeDecl& d = decls_[i];
      if (is_reserved_type_name(d.name)) {
        report(d.pos, "type name " + quote(d.name) +
                          " is reserved (a primitive or 'bytes'); expected another name");
        state_[i] = State::Bad;
      } else if (!is_valid_type_name(d.name)) {
        report(d.pos, "invalid type name " + quote(d.name) +
                          "; expected up to 128 characters of A-Z a-z 0-9 _ : / . - starting "
                          "with a letter or '_'");
        state_[i] = State::Bad;
      }
      const auto [it, inserted] = by_name_.emplace(d.name, i);
      if (!inserted) {
        report(d.pos, "duplicate type " + quote(d.name) + "; first declared at " +
                          at(decls_[it->second].pos));
        state_[i] = State::Bad;
      }
    }
  }

  bool layout(std::size_t i) {
    if (state_[i] == State::Ok) return true;
    if (state_[i] == State::Bad) return false;
    state_[i] = State::Visiting;
    const bool ok = decls_[i].opaque_size ? layout_opaque(i) : layout_struct(i);
    state_[i] = ok ? State::Ok : State::Bad;
    return ok;
  }

  bool layout_opaque(std::size_t i) {
    const TypeDecl& d = decls_[i];
    const std::uint64_t size = *d.opaque_size;
    const std::uint64_t align = d.opaque_align;
    bool ok = true;
    if (size == 0 || size > kMaxSampleSize) {
      report(d.size_pos, "size " + std::to_string(size) + " of opaque type " + quote(d.name) +
                             " is out of range; expected 1 B to " + format_size(kMaxSampleSize));
      ok = false;
    }
    if (!is_power_of_two(align) || align > kMaxAlign) {
      report(d.align_pos, "alignment " + std::to_string(align) + " of type " + quote(d.name) +
                              " is not a power of two up to " + std::to_string(kMaxAlign) +
                              "; expected 1, 2, 4, 8, 16, ...");
      ok = false;
    } else if (ok && size % align != 0) {
      report(d.size_pos, "size " + std::to_string(size) + " of type " + quote(d.name) +
                             " is not a multiple of its alignment " + std::to_string(align) +
                             "; expected a multiple of " + std::to_string(align) +
                             " (as sizeof always is in C++)");
      ok = false;
    }
    types_[i] = Type{d.name, TypeKind::Opaque, size, align, {}, d.pos};
    return ok;
  }

  bool layout_struct(std::size_t i) {
    const TypeDecl& d = decls_[i];
    Type& out = types_[i];
    out = Type{d.name, TypeKind::Struct, 0, 1, {}, d.pos};
    if (d.fields.empty()) {
      report(d.pos, "type " + quote(d.name) +
                        " has no fields; expected at least one field, or 'size' for an opaque "
                        "type");
      return false;
    }
    bool ok = true;
    std::unordered_map<std::string_view, SourcePos> seen;
    std::uint64_t end = 0;
    for (std::size_t f = 0; f < d.fields.size(); ++f) {
      const FieldDecl& fd = d.fields[f];
      if (!is_valid_field_name(fd.name)) {
        report(fd.name_pos, "invalid field name " + quote(fd.name) + " in type " + quote(d.name) +
                                "; expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
        ok = false;
      } else if (const auto [it, inserted] = seen.emplace(fd.name, fd.name_pos); !inserted) {
        report(fd.name_pos, "duplicate field " + quote(fd.name) + " in type " + quote(d.name) +
                                "; first declared at " + at(it->second));
        ok = false;
      }
      path_.emplace_back(i, f);
      std::optional<Field> field = resolve_field(d, fd);
      path_.pop_back();
      if (!field) {
        ok = false;
        continue;
      }
      if (!ok) continue;  // keep reporting field problems, but stop laying out
      field->offset = align_up(end, field->align);
      end = field->offset + field->size;  // both <= 1 GiB: no overflow
      if (end > kMaxSampleSize) {
        report(fd.type_pos, "type " + quote(d.name) + " is too large: field " + quote(fd.name) +
                                " ends at byte " + std::to_string(end) + ", " + kTooLarge +
                                "; expected smaller fields");
        ok = false;
        continue;
      }
      out.align = std::max(out.align, field->align);
      out.fields.push_back(std::move(*field));
    }
    if (!ok) return false;
    out.size = align_up(end, out.align);
    if (out.size > kMaxSampleSize) {
      report(d.pos, "type " + quote(d.name) + " is too large: " + std::to_string(out.size) +
                        " bytes, " + kTooLarge + "; expected smaller fields");
      return false;
    }
    return true;
  }

  // The field's kind, element size, count and alignment (offset is set by
  // the caller), or nullopt after reporting (or silently when it uses a
  // type that already has a reported problem).
  std::optional<Field> resolve_field(const TypeDecl& d, const FieldDecl& fd) {
    const auto ref = detail::parse_field_type(fd.type);
    if (!ref) {
      report(fd.type_pos, ref.error());
      return std::nullopt;
    }
    Field field;
    field.name = fd.name;
    field.type_text = fd.type;
    field.is_array = ref->count.has_value();
    field.count = ref->count.value_or(1);
    if (ref->base == "char") {
      if (!ref->count) {
        report(fd.type_pos, "field type 'char' of " + quote(fd.name) +
                                " needs a length; expected char[N], e.g. char[16]");
        return std::nullopt;
      }
      field.kind = FieldKind::String;
      field.is_array = false;
      field.element_size = 1;
      field.align = 1;
    } else if (ref->base == "bytes") {
      report(fd.type_pos, "'bytes' is a topic type, not a field type (field " + quote(fd.name) +
                              "); expected a fixed-size type such as u8[256]");
      return std::nullopt;
    } else if (const auto scalar = parse_scalar(ref->base)) {
      field.kind = FieldKind::Scalar;
      field.scalar = *scalar;
      field.element_size = scalar_size(*scalar);
      field.align = field.element_size;
    } else if (const auto it = by_name_.find(ref->base); it != by_name_.end()) {
      const std::size_t j = it->second;
      if (state_[j] == State::Visiting) {
        report_cycle(fd, j);
        return std::nullopt;
      }
      if (!layout(j)) return std::nullopt;
      field.kind = FieldKind::Nested;
      field.nested = j;
      field.element_size = types_[j].size;
      field.align = types_[j].align;
    } else {
      report_unknown_type(fd, ref->base);
      return std::nullopt;
    }
    if (__builtin_mul_overflow(field.element_size, field.count, &field.size) ||
        field.size > kMaxSampleSize) {
      report(fd.type_pos, "field " + quote(fd.name) + " of type " + quote(d.name) + " (" + fd.type +
                              ") is " + kTooLarge + "; expected a smaller array");
      return std::nullopt;
    }
    return field;
  }

  void report_unknown_type(const FieldDecl& fd, std::string_view base) {
    std::vector<std::string_view> candidates{"bool", "i8",  "i16", "i32", "i64", "u8",
                                             "u16",  "u32", "u64", "f32", "f64", "char"};
    for (const TypeDecl& other : decls_) candidates.push_back(other.name);
    std::string message = "unknown field type " + quote(base) + " of field " + quote(fd.name);
    if (const auto guess = detail::closest(base, candidates)) {
      message += "; did you mean " + quote(*guess) + "?";
    } else {
      message +=
          "; expected bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, char[N], T[N] or a "
          "type declared under 'types'";
    }
    report(fd.type_pos, std::move(message));
  }

  // The field being resolved closes a cycle back to type `j`.
  void report_cycle(const FieldDecl& fd, std::size_t j) {
    std::string chain;
    bool in_cycle = false;
    for (const auto& [type, field] : path_) {
      in_cycle = in_cycle || type == j;
      if (!in_cycle) continue;
      chain += decls_[type].name + "." + decls_[type].fields[field].name + " -> ";
    }
    chain += decls_[j].name;
    report(fd.type_pos, "recursive type: " + quote(decls_[j].name) + " contains itself (" + chain +
                            "); expected types that do not nest themselves (a type cannot hold "
                            "itself by value)");
  }

  // Keeps the good types in declaration order and renumbers nested indices.
  Schema compact() {
    std::vector<std::size_t> new_index(decls_.size(), 0);
    Schema schema;
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      if (state_[i] != State::Ok) continue;
      new_index[i] = schema.types_.size();
      schema.types_.push_back(std::move(types_[i]));
    }
    // An Ok type only nests Ok types, so every index is remapped.
    for (Type& type : schema.types_) {
      for (Field& field : type.fields) {
        if (field.kind == FieldKind::Nested) field.nested = new_index[field.nested];
      }
    }
    return schema;
  }

  std::span<const TypeDecl> decls_;
  std::string_view file_;
  std::vector<Diagnostic>& errors_;
  std::unordered_map<std::string_view, std::size_t> by_name_;  // first declaration
  std::vector<State> state_;
  std::vector<Type> types_;                                // parallel to decls_
  std::vector<std::pair<std::size_t, std::size_t>> path_;  // (type, field) being resolved
};

Schema build_schema(std::span<const TypeDecl> decls, std::string_view file,
                    std::vector<Diagnostic>& errors) {
  return SchemaBuilder(decls, file, errors).build();
}

}  // namespace ferry::config
