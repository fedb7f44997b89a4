#pragma once
// What a publisher does when a subscriber's queue is full (docs/concepts/policies.md).

#include <cstdint>
#include <optional>
#include <string_view>

namespace ferry::config {

// The one policy enum of ferry: the loader's, the wire's (discovery::Policy is
// this type) and the runtime's. The numbers are the control protocol's wire
// values: never renumber.
enum class Policy : std::uint8_t {
  Block = 0,       // "block": wait for room up to block_timeout_ms, then count timed_out
  DropNew = 1,     // "drop_new": the full queue refuses the new sample
  DropOldest = 2,  // "drop_oldest": the full queue discards its oldest unread sample
};

// "block", "drop_new" or "drop_oldest": the spelling used in YAML and by the CLI.
[[nodiscard]] std::string_view to_string(Policy policy) noexcept;

// The inverse of to_string; exact, case-sensitive match.
[[nodiscard]] std::optional<Policy> parse_policy(std::string_view text) noexcept;

// "block, drop_new, drop_oldest": for messages that list the valid policies.
inline constexpr std::string_view kPolicyList = "block, drop_new, drop_oldest";

}  // namespace ferry::config
