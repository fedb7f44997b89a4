#pragma once
// Samples as text: decoding a sample's bytes with the YAML type schema (for
// `ferry topic echo`) and encoding a YAML/JSON flow map into a sample's bytes
// (for `ferry topic pub`).
//
// Decoded samples are JSON values with the fields in declaration order:
//   bool, i8..i64, u8..u64  numbers (u64 stays unsigned, i64 signed)
//   f32, f64                numbers (f32 printed with its shortest float
//                           form, so 0.1f shows as 0.1); NaN and infinities
//                           are the strings ".nan", ".inf", "-.inf"
//   char[N]                 a string, up to the first NUL
//   string<=N               a string (its length, at most N)
//   T[<=N]                  an array of the elements used, elided as T[N]
//   T[N]                    an array; one longer than kMaxArrayShown shows as
//                           {count, head: [first kArrayHead elements]}, or
//                           for i8/u8 {size, hex} like an opaque payload
//   nested type             an object
//   opaque type, bytes      {size, hex}: the size and the first kHexPrefix
//                           bytes in hex

#include <cstddef>
#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/schema.hpp"

namespace YAML {
class Node;
}

namespace ferry::cli {

using Json = nlohmann::ordered_json;

inline constexpr std::size_t kMaxArrayShown = 256;
inline constexpr std::size_t kArrayHead = 16;
inline constexpr std::size_t kHexPrefix = 32;

// A sample of `type` (a struct or opaque type of `schema`). `bytes` shorter
// than the type is shown as opaque (it cannot be decoded field by field).
// With `full`, long arrays and sequences are shown whole.
[[nodiscard]] Json decode_sample(const config::Schema& schema, const config::Type& type,
                                 std::span<const std::byte> bytes, bool full = false);

// {size, hex}: an opaque or `bytes` payload.
[[nodiscard]] Json decode_opaque(std::span<const std::byte> bytes);

// The YAML-like human form of a decoded sample: one `key: value` line per
// field, nested objects indented, arrays of scalars in flow style.
[[nodiscard]] std::string to_yaml_text(const Json& sample);

// One line of JSON (invalid UTF-8 in strings replaced, never an exception).
[[nodiscard]] std::string to_json_line(const Json& value);

// Parses VALUE with yaml-cpp (a YAML or JSON flow map). The error is one
// sentence.
[[nodiscard]] std::expected<YAML::Node, std::string> parse_value(std::string_view text);

// The bytes of a sample of `type` built from `value` (a map of field names;
// null or an empty map gives all zeros). Missing fields and array elements
// are zero. An unknown field, a value of the wrong type, a number out of its
// type's range, a string longer than its char[N] (N - 1 characters, keeping
// the terminating NUL) or its string<=N (N bytes), or an array longer than
// N (T[N] or T[<=N]) is an error naming the
// field, e.g. "field 'pose.frame': ...".
[[nodiscard]] std::expected<std::vector<std::byte>, std::string> encode_sample(
    const config::Schema& schema, const config::Type& type, const YAML::Node& value);

}  // namespace ferry::cli
