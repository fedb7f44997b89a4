// ferry config check FILE: validates a topic configuration and prints every
// problem as FILE:LINE:COL: message.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "usage.hpp"

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

void add_config_commands(CLI::App& app, Context& context) {
  auto* config = app.add_subcommand("config", "Work with topic configuration files");
  config->require_subcommand(1);
  auto* check_cmd = config->add_subcommand(
      "check", "Validate a YAML configuration; print each problem with file:line:col");
  auto file = std::make_shared<std::string>();
  check_cmd->add_option("FILE", *file, "The YAML file")->required();
  // Taken like everywhere (scripts pass it to every verb), but it changes
  // nothing here, and help says so.
  add_domain_option(*check_cmd, context,
                    "Accepted for uniformity, not used: the check reads FILE only");
  check_cmd->footer("Example:\n  ferry config check examples/hello/hello.yaml");
  check_cmd->callback([file] { check(*file); });
}

}  // namespace ferry::cli
