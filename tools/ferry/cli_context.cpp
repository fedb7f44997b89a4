#include "cli_context.hpp"

#include <optional>

#include "ferry/discovery/paths.hpp"

namespace ferry::cli {

std::string Context::domain() const {
  std::optional<std::string_view> flag;
  if (!domain_flag.empty()) flag = domain_flag;
  auto resolved = discovery::resolve_domain(flag, std::nullopt);
  if (!resolved) throw Failure(kExitUsage, resolved.error().message);
  return *resolved;
}

}  // namespace ferry::cli
