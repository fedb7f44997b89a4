// ferry: inspect and drive a ferry domain from the command line.
#include "cli_options.hpp"

int main(int argc, char** argv) { return ferry::cli::run_command_line(argc, argv); }
