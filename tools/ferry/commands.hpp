#pragma once
// Each file registers its verbs on the CLI11 app; the callback runs the verb.

#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace ferry::cli {

void add_config_commands(CLI::App& app, Context& context);
void add_topic_commands(CLI::App& app, Context& context);

}  // namespace ferry::cli
