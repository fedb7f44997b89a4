#pragma once
// The type schema: declared types with their C/C++ ABI layout (x86_64 and
// aarch64 Linux: natural alignment, padding between fields, a struct's size
// rounded up to its alignment), so that a plain C++ struct with the same
// fields has the same sizeof, alignof and offsetof.
//
// The description is flat, meant to be walked by the CLI when it decodes a
// sample: Schema::types() is a vector; a nested field refers to its type by
// index into that vector, never by pointer. Decoding a sample of type `t` at
// `base`:
//
//   for (const Field& f : t.fields)
//     for (std::uint64_t i = 0; i < (f.kind == FieldKind::String ? 1 : f.count); ++i) {
//       const std::byte* at = base + f.offset + i * f.element_size;
//       switch (f.kind) { Scalar: read f.scalar at `at`; String: f.count chars;
//                         Nested: recurse into schema.type(f.nested) at `at`; }
//     }
//
// Such a recursion is bounded: build_schema refuses types nested deeper
// than kMaxTypeNesting (limits.hpp), and cycles.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"

namespace ferry::config {

enum class Scalar : std::uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64 };

// "bool", "i8", ... "f64".
[[nodiscard]] std::string_view to_string(Scalar scalar) noexcept;
[[nodiscard]] std::optional<Scalar> parse_scalar(std::string_view text) noexcept;
// Size and alignment are equal for every scalar on the supported ABIs.
[[nodiscard]] std::uint64_t scalar_size(Scalar scalar) noexcept;

enum class FieldKind : std::uint8_t {
  Scalar,         // a primitive, or an array of them (is_array)
  String,         // char[N]: N bytes holding a NUL-padded string (count == N)
  Nested,         // a declared type, or an array of them; see Field::nested
  BoundedString,  // string<=N: a uint32 length, then N bytes (count == N)
};

// The layout of string<=N and T[<=N] (ferry::String, ferry::Vector): a
// uint32 length at the field's offset, the N elements from data_offset
// (the larger of 4 and the element's alignment), the whole aligned to that
// too. A length read from a sample is not trusted: readers check it
// against count.

struct Field {
  std::string name;
  std::string type_text;  // as written in YAML: "u64", "char[16]", "Pose[4]"
  FieldKind kind = FieldKind::Scalar;
  Scalar scalar = Scalar::U8;     // kind == Scalar
  std::size_t nested = 0;         // kind == Nested: index into Schema::types()
  bool is_array = false;          // written T[N] (char[N] is a String, not an array)
  bool sequence = false;          // written T[<=N] (kind Scalar or Nested)
  std::uint64_t count = 1;        // elements: N for T[N], T[<=N], char[N], string<=N, else 1
  std::uint64_t data_offset = 0;  // sequence and BoundedString: the first element's
                                  // offset from the field's (the length is at 0)
  std::uint64_t element_size = 0;
  std::uint64_t size = 0;    // element_size x count
  std::uint64_t offset = 0;  // from the start of the enclosing type
  std::uint64_t align = 1;

  // T[<=N] or string<=N: a length, then up to `count` elements.
  [[nodiscard]] bool bounded() const noexcept {
    return sequence || kind == FieldKind::BoundedString;
  }
};

enum class TypeKind : std::uint8_t {
  Struct,  // declared with `fields:`
  Opaque,  // declared with `size:` (and optionally `align:`); no fields
};

struct Type {
  std::string name;
  TypeKind kind = TypeKind::Struct;
  std::uint64_t size = 0;
  std::uint64_t align = 1;
  std::vector<Field> fields;  // in declaration order; empty for Opaque
  SourcePos pos;              // where the type's name was declared
  std::string ros2;           // its ROS 2 name ("sensor_msgs/msg/Image") if declared
  std::string file;           // the file that declared it (an include, or the configuration)
  // Whether its samples have a bounded field, here or in a nested type:
  // their CDR size then depends on the sample.
  bool variable = false;
};

class Schema {
 public:
  // Declaration order.
  [[nodiscard]] const std::vector<Type>& types() const noexcept { return types_; }
  [[nodiscard]] const Type& type(std::size_t index) const { return types_.at(index); }
  [[nodiscard]] const Type* find(std::string_view name) const noexcept;
  [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const noexcept;

 private:
  friend class SchemaBuilder;
  std::vector<Type> types_;
};

// What the YAML says, before layout. Positions are those of the YAML nodes,
// for messages.
struct FieldDecl {
  std::string name;
  std::string type;  // "u8", "char[16]", "Pose[4]", ...
  SourcePos name_pos;
  SourcePos type_pos;
};

struct TypeDecl {
  std::string name;
  SourcePos pos;                  // of the name
  std::string ros2;               // `ros2:` (checked: pkg/msg/Name), or empty
  std::size_t file = 0;           // index into build_schema's `files` (0: the configuration)
  std::vector<FieldDecl> fields;  // a struct when opaque_size is empty
  std::optional<std::uint64_t> opaque_size;
  std::uint64_t opaque_align = 1;  // only with opaque_size
  SourcePos size_pos;
  SourcePos align_pos;
};

// Lays out the declared types (in any order: a type may use one declared
// after it). Every problem is appended to `errors` with file name `file`:
// duplicate type or field, reserved or malformed names, unknown field type,
// bad array syntax, recursive nesting, nesting deeper than kMaxTypeNesting,
// a size over kMaxSampleSize (which
// also catches arithmetic overflow), opaque size/alignment rules. Types with
// a problem, and those that use them, are left out of the result.
[[nodiscard]] Schema build_schema(std::span<const TypeDecl> decls, std::string_view file,
                                  std::vector<Diagnostic>& errors);
// The same with types of several files (a configuration and its includes):
// TypeDecl::file indexes `files`, which names each in messages.
[[nodiscard]] Schema build_schema(std::span<const TypeDecl> decls,
                                  std::span<const std::string> files,
                                  std::vector<Diagnostic>& errors);

}  // namespace ferry::config
