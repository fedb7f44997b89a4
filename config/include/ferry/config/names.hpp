#pragma once
// Rules for the names a configuration holds.

#include <string_view>

namespace ferry::config {

// Domain: [A-Za-z0-9_-]{1,32} (the same rule as ferry::transport::is_valid_domain;
// repeated here so that config depends on no other ferry library).
[[nodiscard]] bool is_valid_domain_name(std::string_view name) noexcept;

// Topic: 1 to 128 characters of [A-Za-z0-9_/.-], no leading or trailing '/',
// no empty segment ("a//b"). Slashes group topics ("robot/pose").
[[nodiscard]] bool is_valid_topic_name(std::string_view name) noexcept;

// Declared type: 1 to 128 characters, a letter or '_' first, then
// [A-Za-z0-9_:/.-] so that "camera/Frame" and "geo::Pose" work
// (FERRY_TYPE_NAMED). Primitive names, "char", "bytes" and "string" are reserved.
[[nodiscard]] bool is_valid_type_name(std::string_view name) noexcept;
[[nodiscard]] bool is_reserved_type_name(std::string_view name) noexcept;

// Field: a C identifier, [A-Za-z_][A-Za-z0-9_]* (it becomes a struct member
// and a JSON key), at most 128 characters.
[[nodiscard]] bool is_valid_field_name(std::string_view name) noexcept;

// A ROS 2 message name: "pkg/msg/Name", each part [A-Za-z][A-Za-z0-9_]*.
[[nodiscard]] bool is_ros2_message_name(std::string_view name) noexcept;

}  // namespace ferry::config
