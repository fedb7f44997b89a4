#include "ferry/config/policy.hpp"

namespace ferry::config {

std::string_view to_string(Policy policy) noexcept {
  switch (policy) {
    case Policy::block:
      return "block";
    case Policy::drop_new:
      return "drop_new";
    case Policy::drop_oldest:
      return "drop_oldest";
  }
  return "unknown";
}

std::optional<Policy> parse_policy(std::string_view text) noexcept {
  for (const Policy p : {Policy::block, Policy::drop_new, Policy::drop_oldest}) {
    if (text == to_string(p)) return p;
  }
  return std::nullopt;
}

}  // namespace ferry::config
