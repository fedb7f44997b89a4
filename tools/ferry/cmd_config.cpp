// ferry config check FILE: validates a topic configuration and prints every
// problem as FILE:LINE:COL: message.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"

namespace ferry::cli {

config::Config load_checked(const std::string& file) {
  const auto problems = config::check_file(file);
  for (const auto& d : problems) std::fprintf(stderr, "%s\n", d.to_string().c_str());
  if (problems.size() > config::kMaxReportedProblems) {
    // The last line said how many more there are.
    throw Failure(kExitUsage,
                  "over " + std::to_string(config::kMaxReportedProblems) + " problems in " + file);
  }
  if (!problems.empty()) {
    throw Failure(kExitUsage, std::to_string(problems.size()) + " problem(s) in " + file);
  }
  return config::load_file(file);
}

namespace {

void check(const std::string& file) {
  const config::Config loaded = load_checked(file);
  std::printf("%s: ok (%zu type(s), %zu topic(s))\n", file.c_str(), loaded.schema.types().size(),
              loaded.topics.size());
}

}  // namespace

int run_config_check(const ConfigCheckOptions& o, const Context& /*context*/) {
  check(o.file);
  return kExitOk;
}

}  // namespace ferry::cli
