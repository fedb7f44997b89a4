#include "cli_context.hpp"

#include <fmt/format.h>

#include <optional>

#include "ferry/discovery/paths.hpp"

namespace ferry::cli {

std::string Context::set_domain_flag(const std::string& name) {
  if (domain_given && name != domain_flag) {
    return fmt::format("given twice, as '{}' and as '{}'", domain_flag, name);
  }
  domain_flag = name;
  domain_given = true;
  return {};
}

std::string Context::domain() const {
  std::optional<std::string_view> flag;
  if (!domain_flag.empty()) flag = domain_flag;
  auto resolved = discovery::resolve_domain(flag, std::nullopt);
  if (!resolved) throw Failure(kExitUsage, resolved.error().message);
  return *resolved;
}

}  // namespace ferry::cli
