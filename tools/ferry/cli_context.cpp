#include "cli_context.hpp"

#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ferry/discovery/paths.hpp"

namespace ferry::cli {

void Context::set_domain_flag(const std::string& name) {
  if (domain_given && name != domain_flag) {
    throw CLI::ValidationError("--domain", fmt::format("given twice, as '{}' and as '{}'", domain_flag, name));
  }
  domain_flag = name;
  domain_given = true;
}

std::string Context::domain() const {
  std::optional<std::string_view> flag;
  if (!domain_flag.empty()) flag = domain_flag;
  auto resolved = discovery::resolve_domain(flag, std::nullopt);
  if (!resolved) throw Failure(kExitUsage, resolved.error().message);
  return *resolved;
}

}  // namespace ferry::cli
