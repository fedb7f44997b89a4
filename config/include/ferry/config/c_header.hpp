#pragma once
// The C view of a schema (`ferry gen c`, the C API's docs/c-api.md): every
// declared type as `typedef struct {...} Name;` with the YAML's field names,
// a `Name_TYPE_NAME` macro holding its YAML name (what
// ferry_publisher_create() and ferry_subscriber_create() take), and
// _Static_asserts of its size, alignment and every field's offset, so that a
// compiler that lays it out otherwise stops the build. C11.
//
// Mapping: bool -> bool (<stdbool.h>), iN/uN -> intN_t/uintN_t, f32 ->
// float, f64 -> double, char[N] -> char[N], T[N] -> T[N], a nested type ->
// its typedef; an opaque type (size:, align:) -> `typedef struct {
// _Alignas(A) unsigned char data[SIZE]; } Name;`. A type name "pkg/msg/Name"
// or "pkg::Name" becomes pkg_msg_Name / pkg_Name: each separator and each
// character C does not allow in a name becomes '_'. Types come in
// declaration order, each after the types it uses: the same order and
// layout as `ferry gen cpp` (cpp_header.hpp).

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"
#include "ferry/config/schema.hpp"

namespace ferry::config {

// The C name of a YAML type name: "pkg/msg/Name" -> "pkg_msg_Name".
[[nodiscard]] std::string c_type_name(std::string_view yaml_name);

// The header text; the same schema and source name give the same bytes.
// `source_name` is named in the header's first comment and its include
// guard; `file_for_errors` names the file in the errors: a field or type
// name that is a C keyword, or two types with one C name, each at the
// type's position.
[[nodiscard]] std::expected<std::string, std::vector<Diagnostic>> generate_c_header(
    const Schema& schema, std::string_view source_name, std::string_view file_for_errors);

}  // namespace ferry::config
