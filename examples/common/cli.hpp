#pragma once
// The examples' command lines, parsed by CLI11. --help prints the help and
// exits 0; a bad argument prints one line on stderr, "program: what is
// wrong; usage: ...", and exits 2, the same for every example.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>

namespace example {

// Checks that an argument is a whole number of at least `min`. Not CLI11's
// own checks: CLI11 2.1 reads "-5" as a huge unsigned number, and its range
// checks print the bounds of a double.
inline CLI::Validator at_least(std::uint64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc{} && end == text.data() + text.size() && value >= min) return {};
        const std::string wanted = min == 0 ? "a non-negative whole number" : "a whole number of at least " + std::to_string(min);
        return "must be " + wanted + ", not '" + text + "'";
      },
      "");
}

// Checks that an argument is a rate in Hz: above 0 (a pacer waits 1/rate)
// and at most 1 MHz.
inline CLI::Validator rate() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double hz = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), hz);
        if (ec == std::errc{} && end == text.data() + text.size() && hz > 0.0 && hz <= 1e6) return {};
        return "must be above 0 and at most 1000000, not '" + text + "'";
      },
      "");
}

// Parses argv into the options of `app` (named after the program); returns
// only when they are good. `usage` is the short form printed with an error.
inline void parse(CLI::App& app, int argc, char** argv, const char* usage) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) std::exit(app.exit(e));  // --help
    std::fprintf(stderr, "%s: %s; usage: %s\n", app.get_name().c_str(), e.what(), usage);
    std::exit(2);
  }
}

}  // namespace example
