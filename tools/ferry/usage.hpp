#pragma once
// What ferry's command line shares: the flags every level takes (--domain,
// --version; CLI11 gives --help to each subcommand itself), number checks
// whose errors read well, and the one-line usage error printed when parsing
// fails.

#include <string>

#include <CLI/CLI.hpp>

#include "cli_context.hpp"

namespace ferry::cli {

inline constexpr const char* kVersion = "ferry 0.1.0";

// Adds `--domain NAME` to `app`, storing into the context.
CLI::Option* add_domain_option(CLI::App& app, Context& context, const std::string& help);

// Gives `app` and every subcommand below it --domain and --version, so that
// they work before the verb, after it and between its words. A subcommand
// that registered its own --domain (bench: refused; config check: unused)
// keeps it.
void add_global_flags(CLI::App& app, Context& context);

// Checks for numeric options: "--rate: must be above 0, got 0" (CLI11's
// PositiveNumber prints its range up to 1.8e308 in full).
CLI::Validator above_zero();
CLI::Validator zero_or_more();

// "ferry topic list": the words of the command line that CLI11 had matched
// when parsing stopped (after a failed parse too).
std::string command_path(const CLI::App& root);

// The usage error as one sentence, without the "ferry: " prefix, naming the
// token that was wrong where CLI11 kept it, and ending with where to look:
// "unknown command 'frob' for 'ferry topic'; see 'ferry topic --help'".
std::string usage_error(const CLI::App& root, const CLI::Error& error);

}  // namespace ferry::cli
