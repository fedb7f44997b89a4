#pragma once
// How ferry's command line words its usage errors and checks its numbers,
// from what the parser reports (cli_options.cpp hands it over), so that this
// file does not need CLI11.

#include <string>
#include <vector>

namespace ferry::cli {

inline constexpr const char* kVersion = "ferry 0.1.0";

// One level of the command line as the parser left it when it stopped.
struct ParsedLevel {
  std::string name;                    // "topic"; the root is "ferry"
  std::vector<std::string> remaining;  // words this level could not place
  std::vector<std::string> commands;   // the names of its subcommands
};

// What kind of parse error the parser raised: a missing argument or
// subcommand, extra words, or anything else (a bad value of a known option).
enum class ParseErrorKind { Required, Extras, Other };

// The usage error as one sentence, without the "ferry: " prefix, naming the
// token that was wrong where the parser kept it, and ending with where to
// look: "unknown command 'frob' for 'ferry topic'; see 'ferry topic --help'".
// `chain` holds the levels the parser entered, root first; `message` is the
// parser's own.
std::string usage_error(const std::vector<ParsedLevel>& chain, ParseErrorKind kind,
                        const std::string& message);

// Checks for numeric options: an empty string when `text` is a finite number
// above 0 (or 0 or more, when `zero_ok`), else why not ("must be above 0,
// got 0"; "expected a number, got 'inf'").
std::string check_number(const std::string& text, bool zero_ok);

// The same for a count: digits only, so that "-1" is not read as 2^64 - 1
// (an unsigned option would otherwise take it).
std::string check_count(const std::string& text, bool zero_ok = true);

}  // namespace ferry::cli
