// Layout of declared types: must match what g++ does for the same struct.

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>

#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/schema.hpp"

using namespace ferry::config;

namespace {
// docs/cpp-api.md's Pose, as users write it: 8 + 8 + 8 + 16 = 40 bytes, no padding.
struct Pose {
  std::uint64_t stamp_ns;
  double x, y;
  char frame[16];
};
static_assert(sizeof(Pose) == 40 && alignof(Pose) == 8);

struct Inner {
  std::uint8_t tag;
  std::int32_t value;
  std::uint16_t flags;
};
static_assert(sizeof(Inner) == 12 && alignof(Inner) == 4);

// Padding everywhere: before a nested struct, inside arrays, at the end.
struct Outer {
  bool ok;
  Inner inner;
  std::int8_t small[3];
  double scale;
  Inner several[2];
  char name[5];
  float ratio;
  std::uint16_t tail;
};

const char* const kOuterYaml = R"(
types:
  Outer:
    fields:
      - { name: ok, type: bool }
      - { name: inner, type: Inner }
      - { name: small, type: "i8[3]" }
      - { name: scale, type: f64 }
      - { name: several, type: "Inner[2]" }
      - { name: name, type: "char[5]" }
      - { name: ratio, type: f32 }
      - { name: tail, type: u16 }
  Inner:
    fields:
      - { name: tag, type: u8 }
      - { name: value, type: i32 }
      - { name: flags, type: u16 }
)";

Schema schema_of(const std::vector<TypeDecl>& decls, std::vector<Diagnostic>& errors) {
  return build_schema(decls, "t.yaml", errors);
}

TypeDecl struct_decl(std::string name, std::vector<std::pair<std::string, std::string>> fields) {
  TypeDecl d;
  d.name = std::move(name);
  d.pos = {1, 1};
  std::size_t line = 2;
  for (auto& [field_name, type] : fields)
    d.fields.push_back({field_name, type, {line, 3}, {line++, 10}});
  return d;
}
}  // namespace

TEST_CASE("Pose from the design is 40 bytes aligned to 8, laid out like the C++ struct") {
  const Config config = load_file(FERRY_CONFIG_EXAMPLES "/demo.yaml");
  const Type* pose = config.schema.find("Pose");
  REQUIRE(pose != nullptr);
  CHECK(pose->kind == TypeKind::Struct);
  CHECK(pose->size == sizeof(Pose));
  CHECK(pose->align == alignof(Pose));
  REQUIRE(pose->fields.size() == 4);
  CHECK(pose->fields[0].name == "stamp_ns");
  CHECK(pose->fields[0].kind == FieldKind::Scalar);
  CHECK(pose->fields[0].scalar == Scalar::U64);
  CHECK(pose->fields[0].offset == offsetof(Pose, stamp_ns));
  CHECK(pose->fields[1].offset == offsetof(Pose, x));
  CHECK(pose->fields[2].offset == offsetof(Pose, y));
  CHECK(pose->fields[2].scalar == Scalar::F64);
  const Field& frame = pose->fields[3];
  CHECK(frame.kind == FieldKind::String);
  CHECK_FALSE(frame.is_array);
  CHECK(frame.count == 16);
  CHECK(frame.size == 16);
  CHECK(frame.offset == offsetof(Pose, frame));
  CHECK(frame.type_text == "char[16]");
}

TEST_CASE("Frame from the design is 3110408 bytes aligned to 4") {
  const Config config = load_file(FERRY_CONFIG_EXAMPLES "/demo.yaml");
  const Type* frame = config.schema.find("Frame");
  REQUIRE(frame != nullptr);
  CHECK(frame->size == 3110408);
  CHECK(frame->align == 4);
  const Field& pixels = frame->fields.at(2);
  CHECK(pixels.kind == FieldKind::Scalar);
  CHECK(pixels.scalar == Scalar::U8);
  CHECK(pixels.is_array);
  CHECK(pixels.count == 3110400);
  CHECK(pixels.element_size == 1);
  CHECK(pixels.offset == 8);
}

TEST_CASE("nested types, arrays of them and char[N] are laid out like the C++ struct") {
  const Config config = load_string(kOuterYaml, "t.yaml");
  const Type* outer = config.schema.find("Outer");
  REQUIRE(outer != nullptr);
  CHECK(outer->size == sizeof(Outer));
  CHECK(outer->align == alignof(Outer));
  const auto& f = outer->fields;
  REQUIRE(f.size() == 8);
  CHECK(f[0].offset == offsetof(Outer, ok));
  CHECK(f[1].offset == offsetof(Outer, inner));
  CHECK(f[2].offset == offsetof(Outer, small));
  CHECK(f[3].offset == offsetof(Outer, scale));
  CHECK(f[4].offset == offsetof(Outer, several));
  CHECK(f[5].offset == offsetof(Outer, name));
  CHECK(f[6].offset == offsetof(Outer, ratio));
  CHECK(f[7].offset == offsetof(Outer, tail));

  CHECK(f[1].kind == FieldKind::Nested);
  CHECK(config.schema.type(f[1].nested).name == "Inner");
  CHECK(f[4].kind == FieldKind::Nested);
  CHECK(f[4].is_array);
  CHECK(f[4].count == 2);
  CHECK(f[4].element_size == sizeof(Inner));
  CHECK(f[4].size == sizeof(Outer::several));
  CHECK(f[2].scalar == Scalar::I8);
  CHECK(f[2].size == 3);

  const Type* inner = config.schema.find("Inner");
  REQUIRE(inner != nullptr);
  CHECK(inner->size == sizeof(Inner));
  CHECK(inner->fields[1].offset == offsetof(Inner, value));
  CHECK(inner->fields[2].offset == offsetof(Inner, flags));
}

TEST_CASE("types keep their declaration order and nested fields point into it") {
  const Config config = load_string(kOuterYaml, "t.yaml");
  REQUIRE(config.schema.types().size() == 2);
  CHECK(config.schema.types()[0].name == "Outer");
  CHECK(config.schema.types()[1].name == "Inner");
  CHECK(config.schema.index_of("Inner") == 1);
  CHECK(config.schema.types()[0].fields[1].nested == 1);
  CHECK(config.schema.find("Missing") == nullptr);
}

TEST_CASE("every scalar has its natural size and alignment") {
  struct Case {
    const char* name;
    Scalar scalar;
    std::uint64_t size;
  };
  for (const Case c :
       {Case{"bool", Scalar::Bool, sizeof(bool)}, Case{"i8", Scalar::I8, 1},
        Case{"i16", Scalar::I16, 2}, Case{"i32", Scalar::I32, 4},
        Case{"i64", Scalar::I64, alignof(std::int64_t)}, Case{"u8", Scalar::U8, 1},
        Case{"u16", Scalar::U16, 2}, Case{"u32", Scalar::U32, 4},
        Case{"u64", Scalar::U64, alignof(std::uint64_t)}, Case{"f32", Scalar::F32, alignof(float)},
        Case{"f64", Scalar::F64, alignof(double)}}) {
    CAPTURE(c.name);
    CHECK(parse_scalar(c.name) == c.scalar);
    CHECK(to_string(c.scalar) == c.name);
    CHECK(scalar_size(c.scalar) == c.size);
  }
  CHECK_FALSE(parse_scalar("char").has_value());
  CHECK_FALSE(parse_scalar("f128").has_value());
}

TEST_CASE("an opaque type takes its size and alignment as given") {
  const Config config = load_string(R"(
types:
  Blob: { size: 256 }
  Aligned: { size: 4KiB, align: 64 }
)",
                                    "t.yaml");
  const Type* blob = config.schema.find("Blob");
  REQUIRE(blob != nullptr);
  CHECK(blob->kind == TypeKind::Opaque);
  CHECK(blob->size == 256);
  CHECK(blob->align == 1);
  CHECK(blob->fields.empty());
  const Type* aligned = config.schema.find("Aligned");
  REQUIRE(aligned != nullptr);
  CHECK(aligned->size == 4096);
  CHECK(aligned->align == 64);
}

TEST_CASE("an opaque type nests like any other type") {
  const Config config = load_string(R"(
types:
  Wrapper:
    fields:
      - { name: id, type: u8 }
      - { name: blobs, type: "Blob[3]" }
  Blob: { size: 24, align: 8 }
)",
                                    "t.yaml");
  const Type* wrapper = config.schema.find("Wrapper");
  REQUIRE(wrapper != nullptr);
  CHECK(wrapper->fields[1].offset == 8);
  CHECK(wrapper->size == 80);
  CHECK(wrapper->align == 8);
}

TEST_CASE("type names may carry a namespace or a path, like FERRY_TYPE_NAMED") {
  const Config config = load_string(R"(
types:
  camera/Frame: { size: 16 }
  geo::Pose:
    fields:
      - { name: frame, type: "camera/Frame[2]" }
topics:
  - { name: camera/frames, type: camera/Frame }
)",
                                    "t.yaml");
  CHECK(config.schema.find("geo::Pose")->size == 32);
  CHECK(config.topics.at(0).sample_size == 16);
}

TEST_CASE("build_schema reports a type that contains itself, naming the cycle") {
  std::vector<Diagnostic> errors;
  const auto schema = schema_of({struct_decl("Node", {{"id", "u32"}, {"next", "Node"}})}, errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 3);
  CHECK(errors[0].column == 10);
  CHECK(
      errors[0].message.starts_with("recursive type: 'Node' contains itself (Node.next -> Node)"));
  CHECK(schema.types().empty());
}

TEST_CASE("build_schema reports a cycle through several types once and keeps the others") {
  std::vector<Diagnostic> errors;
  const auto schema = schema_of({struct_decl("A", {{"b", "B"}}), struct_decl("B", {{"c", "C[2]"}}),
                                 struct_decl("C", {{"a", "A"}}), struct_decl("Ok", {{"x", "u8"}}),
                                 struct_decl("UsesA", {{"a", "A"}})},
                                errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.find("(A.b -> B.c -> C.a -> A)") != std::string::npos);
  REQUIRE(schema.types().size() == 1);
  CHECK(schema.types()[0].name == "Ok");
}

TEST_CASE("a type larger than 1 GiB is an error, even when the arithmetic would overflow") {
  std::vector<Diagnostic> errors;
  (void)schema_of({struct_decl("Big", {{"data", "u64[200000000]"}}),
                   struct_decl("Wrap", {{"data", "u8[18446744073709551615]"}}),
                   struct_decl("Sum", {{"a", "u8[1073741824]"}, {"b", "u8"}}),
                   struct_decl("Huge", {{"a", "u8[99999999999999999999999]"}})},
                  errors);
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].message.find("over the 1 GiB limit") != std::string::npos);
  CHECK(errors[1].message.find("over the 1 GiB limit") != std::string::npos);
  CHECK(errors[2].message.find("'Sum' is too large: field 'b' ends at byte 1073741825") !=
        std::string::npos);
  CHECK(errors[3].message.find("is too large") != std::string::npos);
}

TEST_CASE("opaque sizes must be positive multiples of a power-of-two alignment") {
  std::vector<Diagnostic> errors;
  auto opaque = [](std::string name, std::uint64_t size, std::uint64_t align) {
    TypeDecl d;
    d.name = std::move(name);
    d.opaque_size = size;
    d.opaque_align = align;
    d.size_pos = {1, 2};
    d.align_pos = {1, 3};
    return d;
  };
  const auto schema =
      schema_of({opaque("Zero", 0, 1), opaque("Odd", 12, 3), opaque("Uneven", 12, 8),
                 opaque("Huge", kMaxSampleSize + 1, 1), opaque("Fine", 12, 4)},
                errors);
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].message.find("size 0 of opaque type 'Zero' is out of range") !=
        std::string::npos);
  CHECK(errors[1].message.find("alignment 3 of type 'Odd' is not a power of two") !=
        std::string::npos);
  CHECK(errors[1].column == 3);
  CHECK(errors[2].message.find("size 12 of type 'Uneven' is not a multiple of its alignment 8") !=
        std::string::npos);
  CHECK(errors[3].message.find("out of range") != std::string::npos);
  REQUIRE(schema.types().size() == 1);
  CHECK(schema.types()[0].name == "Fine");
}
