// The wording of ferry's usage errors (see usage.hpp).
#include "usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace ferry::cli {

namespace {

std::string path_of(const std::vector<ParsedLevel>& chain, std::size_t depth) {
  std::string path = "ferry";
  for (std::size_t i = 1; i <= depth; ++i) path += " " + chain[i].name;
  return path;
}

std::string quoted_list(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", w);
  return out;
}

std::string subcommand_names(const ParsedLevel& level) {
  std::string out;
  for (const auto& name : level.commands) out += fmt::format("{}{}", out.empty() ? "" : ", ", name);
  return out;
}

// CLI11's own message as the middle of a sentence: one line, no capital.
std::string cli11_message(const std::string& message) {
  std::string text = message;
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && (text.back() == ' ' || text.back() == '.')) text.pop_back();
  // CLI11 starts its sentences with a capital ("The following argument...",
  // "A subcommand is required"), but not option names ("--rate: ...").
  if (text.size() > 1 && std::isupper(static_cast<unsigned char>(text[0])) &&
      std::islower(static_cast<unsigned char>(text[1]))) {
    text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  }
  return text;
}

}  // namespace

std::string check_number(const std::string& text, bool zero_ok) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
    return fmt::format("expected a number, got '{}'", text);
  }
  if (zero_ok ? value < 0 : value <= 0)
    return fmt::format("must be {}, got {}", zero_ok ? "0 or more" : "above 0", text);
  return {};
}

std::string check_count(const std::string& text, bool zero_ok) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) return fmt::format("expected a count ({} or more), got '{}'", zero_ok ? 0 : 1, text);
  if (!zero_ok && text.find_first_not_of('0') == std::string::npos)
    return fmt::format("must be above 0, got {}", text);
  return {};
}

std::string usage_error(const std::vector<ParsedLevel>& chain, ParseErrorKind kind,
                        const std::string& message) {
  // What CLI11 could not place (unknown options, extra words, unknown
  // commands) is kept by the subcommand that met it: the deepest level that
  // kept something is where the user went wrong. A missing subcommand or
  // argument is often only the consequence of such a word ("ferry topic
  // frob" is "a subcommand is required" to CLI11), so the word comes first;
  // a bad value of a known option is reported as CLI11 words it.
  const bool leftovers_explain = kind == ParseErrorKind::Required || kind == ParseErrorKind::Extras;
  std::size_t depth = chain.size() - 1;
  std::vector<std::string> left;
  if (leftovers_explain) {
    for (std::size_t i = chain.size(); i-- > 0;) {
      left = chain[i].remaining;
      if (!left.empty()) {
        depth = i;
        break;
      }
    }
  }
  const ParsedLevel& at = chain[depth];
  const std::string path = path_of(chain, depth);
  const bool is_group = !at.commands.empty();
  std::string what;
  if (!left.empty()) {
    // The first word CLI11 could not place is the mistake; the rest often
    // only follows from it ("ferry node frob --json").
    if (left.front().size() > 1 && left.front()[0] == '-') {
      what = fmt::format("unknown option '{}' for '{}'", left.front(), path);
    } else if (is_group) {
      what = fmt::format("unknown command '{}' for '{}' (commands: {})", left.front(), path,
                         subcommand_names(at));
    } else {
      what = fmt::format("unexpected argument{} {} for '{}'", left.size() > 1 ? "s" : "",
                         quoted_list(left), path);
    }
  } else if (kind == ParseErrorKind::Required && is_group) {
    what = fmt::format("'{}' needs a command: {}", path, subcommand_names(at));
  } else {
    what = cli11_message(message);
  }
  return fmt::format("{}; see '{} --help'", what, path);
}

}  // namespace ferry::cli
