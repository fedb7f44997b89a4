#pragma once
// Samples as Python values, read with the schema straight from the sample's
// bytes: bool, int, float, str (char[N], up to the first NUL, invalid UTF-8
// replaced), dict (nested types), list (T[N]).
//
// Python values into sample bytes: a dict of field names (missing fields and
// array elements zero). An unknown field, a value of the wrong type, a
// number out of its type's range, a string longer than its char[N] holds
// (N - 1 bytes and the NUL) or an array longer than N throws ferry::Error
// naming the field, e.g. "field 'pose.frame': ...".

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

#include "ferry/config/schema.hpp"

namespace ferry::python {

[[nodiscard]] pybind11::object field_value(const config::Schema& schema, const config::Field& field,
                                           const std::byte* base);
[[nodiscard]] pybind11::dict struct_value(const config::Schema& schema, const config::Type& type,
                                          const std::byte* base);

// Writes `value` into the field at `at` (the field's own first byte): a
// value that does not fit (a string or sequence past its bound, a number
// out of range) raises ferry.Error naming `path`.
void store_field(std::byte* at, pybind11::handle value, const config::Schema& schema,
                 const config::Field& f, const std::string& path);

// string<=N / T[<=N]: the length in the sample, never more than N.
[[nodiscard]] std::uint64_t used_length(const config::Field& f, const std::byte* at);

// Writes `value` into `out` (type.size bytes, zeroed by the caller).
void encode_struct(const config::Schema& schema, const config::Type& type, pybind11::handle value,
                   std::byte* out, const std::string& path);

}  // namespace ferry::python
