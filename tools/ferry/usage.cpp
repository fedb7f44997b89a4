#include "usage.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace ferry::cli {

namespace {

constexpr const char* kDomainHelp = "Domain to work on (else FERRY_DOMAIN, else 'default')";

// The subcommands CLI11 entered, root first. get_subcommands() lists what
// was parsed, and stays filled when parse() throws.
std::vector<const CLI::App*> chain_of(const CLI::App& root) {
  std::vector<const CLI::App*> chain{&root};
  while (!chain.back()->get_subcommands().empty()) chain.push_back(chain.back()->get_subcommands().front());
  return chain;
}

std::string path_of(const std::vector<const CLI::App*>& chain, std::size_t depth) {
  std::string path = "ferry";
  for (std::size_t i = 1; i <= depth; ++i) path += " " + chain[i]->get_name();
  return path;
}

std::string quoted_list(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", w);
  return out;
}

std::string subcommand_names(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ", sub->get_name());
  }
  return out;
}

// CLI11's own message as the middle of a sentence: one line, no capital.
std::string cli11_message(const CLI::Error& error) {
  std::string text = error.what();
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

// A number > 0 (or >= 0): an empty string when `text` is one, else why not.
std::string check_number(const std::string& text, bool zero_ok) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isnan(value)) {
    return fmt::format("expected a number, got '{}'", text);
  }
  if (zero_ok ? value < 0 : value <= 0) return fmt::format("must be {}, got {}", zero_ok ? "0 or more" : "above 0", text);
  return {};
}

}  // namespace

CLI::Validator above_zero() {
  return CLI::Validator([](std::string& text) { return check_number(text, false); }, "POSITIVE");
}

CLI::Validator zero_or_more() {
  return CLI::Validator([](std::string& text) { return check_number(text, true); }, "NONNEGATIVE");
}

CLI::Option* add_domain_option(CLI::App& app, Context& context, const std::string& help) {
  return app
      .add_option_function<std::string>(
          "--domain", [&context](const std::string& name) { context.set_domain_flag(name); }, help)
      ->type_name("NAME");
}

void add_global_flags(CLI::App& app, Context& context) {
  if (app.get_option_no_throw("--domain") == nullptr) add_domain_option(app, context, kDomainHelp);
  if (app.get_option_no_throw("--version") == nullptr) app.set_version_flag("--version", kVersion);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add_global_flags(*sub, context);
}

std::string command_path(const CLI::App& root) {
  const auto chain = chain_of(root);
  return path_of(chain, chain.size() - 1);
}

std::string usage_error(const CLI::App& root, const CLI::Error& error) {
  const auto chain = chain_of(root);
  // What CLI11 could not place (unknown options, extra words, unknown
  // commands) is kept by the subcommand that met it: the deepest level that
  // kept something is where the user went wrong. A missing subcommand or
  // argument is often only the consequence of such a word ("ferry topic
  // frob" is "a subcommand is required" to CLI11), so the word comes first;
  // a bad value of a known option is reported as CLI11 words it.
  const bool leftovers_explain = dynamic_cast<const CLI::RequiredError*>(&error) != nullptr ||
                                 dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
  std::size_t depth = chain.size() - 1;
  std::vector<std::string> left;
  if (leftovers_explain) {
    for (std::size_t i = chain.size(); i-- > 0;) {
      left = chain[i]->remaining();
      if (!left.empty()) {
        depth = i;
        break;
      }
    }
  }
  const CLI::App& at = *chain[depth];
  const std::string path = path_of(chain, depth);
  const bool is_group = !at.get_subcommands([](const CLI::App*) { return true; }).empty();
  std::string what;
  if (!left.empty()) {
    // The first word CLI11 could not place is the mistake; the rest often
    // only follows from it ("ferry node frob --json").
    if (left.front().size() > 1 && left.front()[0] == '-') {
      what = fmt::format("unknown option '{}' for '{}'", left.front(), path);
    } else if (is_group) {
      what = fmt::format("unknown command '{}' for '{}' (commands: {})", left.front(), path, subcommand_names(at));
    } else {
      what = fmt::format("unexpected argument{} {} for '{}'", left.size() > 1 ? "s" : "", quoted_list(left), path);
    }
  } else if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && is_group &&
             at.get_subcommands().empty()) {
    what = fmt::format("'{}' needs a command: {}", path, subcommand_names(at));
  } else {
    what = cli11_message(error);
  }
  return fmt::format("{}; see '{} --help'", what, path);
}

}  // namespace ferry::cli
