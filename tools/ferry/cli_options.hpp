#pragma once
// ferry's command line, parsed and run (cli_options.cpp, the one file that
// includes CLI11).

namespace ferry::cli {

// Parses the command line, runs the verb it names and returns the exit code
// (docs/cli/index.md); usage errors and failures are printed as "ferry: <what>".
int run_command_line(int argc, char** argv);

}  // namespace ferry::cli
