#pragma once
// The ROS 2 view of a ferry type (docs/record-replay.md): its schema name and its .msg
// definition, as MCAP files (schema encoding `ros2msg`) and the DDS bridge
// (docs/bridge.md) name and describe it.

#include <cstddef>
#include <string>
#include <string_view>

#include "ferry/config/schema.hpp"

namespace ferry::config {

// "pkg/Name" -> "pkg/msg/Name" (the last '/' splits package and name), a
// bare "Name" -> "ferry/msg/Name"; a name already written "pkg/msg/Name"
// is kept.
[[nodiscard]] std::string ros2_type_name(std::string_view ferry_type);
// The ROS 2 name of schema.type(type): its `ros2:` name when it has one,
// else ros2_type_name(its name).
[[nodiscard]] std::string ros2_type_name(const Schema& schema, std::size_t type);

// The .msg text of schema.type(type): one "TYPE name" line per field, then,
// for each nested type it depends on (depth first, each once), a line of 80
// '=' followed by "MSG: pkg/msg/Name" and that type's fields, as ROS 2 bags
// write dependent definitions. Mapping: bool, i8..i64 -> int8..int64,
// u8..u64 -> uint8..uint64, f32/f64 -> float32/float64, char[N] -> uint8[N],
// T[N] -> T[N], string<=N -> string, T[<=N] -> T[] (ROS 2's unbounded
// forms: the bound is ferry's), nested -> its schema name, opaque -> uint8[size] (an opaque
// type used as a field becomes a uint8 array; an opaque topic type is the
// single field "uint8[size] data").
[[nodiscard]] std::string ros2msg_definition(const Schema& schema, std::size_t type);

// A bytes topic's definition: "uint8[] data".
[[nodiscard]] std::string ros2msg_bytes_definition();

// The schema name of a bytes topic: "ferry/msg/Bytes".
[[nodiscard]] std::string ros2_bytes_type_name();

}  // namespace ferry::config
