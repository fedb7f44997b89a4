#include "ferry/config/policy.hpp"

namespace ferry::config {

std::string_view to_string(Policy policy) noexcept {
  switch (policy) {
    case Policy::Block:
      return "block";
    case Policy::DropNew:
      return "drop_new";
    case Policy::DropOldest:
      return "drop_oldest";
  }
  return "unknown";
}

std::optional<Policy> parse_policy(std::string_view text) noexcept {
  for (const Policy p : {Policy::Block, Policy::DropNew, Policy::DropOldest}) {
    if (text == to_string(p)) return p;
  }
  return std::nullopt;
}

}  // namespace ferry::config
