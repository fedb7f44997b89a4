#pragma once
// The C++ view of a schema (docs/types.md, `ferry gen cpp`): every declared
// type as a struct with the YAML's field names and types, registered with
// FERRY_TYPE_NAMED under its YAML name, carrying its layout fingerprint
// (FERRY_TYPE_LAYOUT, layout_fingerprint.hpp) and static_asserts of its
// size, alignment and every field's offset, so that a compiler that lays it
// out otherwise stops the build.
//
// Mapping: bool -> bool, iN/uN -> std::intN_t/std::uintN_t, f32 -> float,
// f64 -> double, char[N] -> char[N], T[N] -> T[N], a nested type -> its
// struct; an opaque type (size:, align:) -> `struct alignas(A) Name {
// std::byte data[SIZE]; }`. A type name "pkg/Name" or "pkg::Name" becomes
// struct Name in namespace pkg; characters C++ does not allow in a name
// ('.', '-') become '_'. Types come in declaration order, each after the
// types it uses.

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"
#include "ferry/config/schema.hpp"

namespace ferry::config {

// The header text; the same schema and source name give the same bytes.
// `source_name` is named in the header's first comment (give the file name,
// not a path that changes between machines); `file_for_errors` names the
// file in the errors: a field or type name that is a C++ keyword, a field
// named like its struct, two types that map to one C++ name or a type name
// that is also another type's namespace, each at the type's position.
[[nodiscard]] std::expected<std::string, std::vector<Diagnostic>> generate_cpp_header(
    const Schema& schema, std::string_view source_name, std::string_view file_for_errors);

}  // namespace ferry::config
