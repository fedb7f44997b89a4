#pragma once
// A type's layout fingerprint (docs/types.md): every field's path, type and
// offset, as text, so that ferryd can check a generated struct field by
// field against the topic's declared type and name the first difference.
//
//   "stamp_ns:u64@0 x:f64@8 inner:Inner@16 inner.flag:bool@16 arr:i32[3]@24"
//
// One space-separated entry per field in declaration order, a nested
// struct's fields following it with a dotted path (an array of structs
// describes its first element, "inners[].flag"); offsets from the start of
// the sample. `ferry gen cpp` writes it into the header (FERRY_TYPE_LAYOUT),
// ferryd computes it from the YAML; both through this one function.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/config/schema.hpp"

namespace ferry::config {

// Longest fingerprint a port may carry (the discovery protocol's limit).
inline constexpr std::size_t kMaxLayoutFingerprint = 16 * 1024;

// The fingerprint of schema.type(type); nullopt for an opaque type (it has
// no fields: size and alignment are all there is to check) and for one whose
// fingerprint would exceed kMaxLayoutFingerprint.
[[nodiscard]] std::optional<std::string> layout_fingerprint(const Schema& schema, std::size_t type);

// Nullopt when the two fingerprints are equal; else one sentence naming the
// first field (in the topic's order) that differs, e.g. "field 'x' is f64
// at offset 8 in the port's type but f64 at offset 0 in the topic's".
[[nodiscard]] std::optional<std::string> first_layout_difference(std::string_view port,
                                                                 std::string_view topic);

}  // namespace ferry::config
