#pragma once
// The examples' command lines: positional arguments and a few --options,
// parsed by this small header instead of CLI11 (each example including
// CLI11 cost about 15 s of compile time, more than the example itself).
// --help prints the help and exits 0; a bad argument prints one line on
// stderr, "program: what is wrong; usage: ...", and exits 2, the same for
// every example.
#include <charconv>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace example {

// Checks an argument's text: empty when good, else what is wrong with it.
using Validator = std::function<std::string(const std::string& text)>;

// A whole number of at least `min` (no sign: "-5" is refused, not wrapped).
inline Validator at_least(std::uint64_t min) {
  return [min](const std::string& text) -> std::string {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc{} && end == text.data() + text.size() && value >= min) return {};
    const std::string wanted = min == 0 ? "a non-negative whole number"
                                        : "a whole number of at least " + std::to_string(min);
    return "must be " + wanted + ", not '" + text + "'";
  };
}

// A rate in Hz: above 0 (a pacer waits 1/rate) and at most 1 MHz.
inline Validator rate() {
  return [](const std::string& text) -> std::string {
    double hz = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), hz);
    if (ec == std::errc{} && end == text.data() + text.size() && hz > 0.0 && hz <= 1e6) return {};
    return "must be above 0 and at most 1000000, not '" + text + "'";
  };
}

// One positional argument or --option taking a value.
class Option {
 public:
  Option(std::string name, std::string help, std::function<bool(const std::string&)> assign)
      : name_(std::move(name)), help_(std::move(help)), assign_(std::move(assign)) {}

  Option* check(Validator validator) {
    validators_.push_back(std::move(validator));
    return this;
  }
  Option* required() {
    required_ = true;
    return this;
  }

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& help() const { return help_; }
  [[nodiscard]] bool is_required() const { return required_; }
  [[nodiscard]] bool positional() const { return !name_.starts_with("--"); }

  // Empty when stored, else the sentence saying what is wrong.
  [[nodiscard]] std::string set(const std::string& text) const {
    for (const Validator& validator : validators_) {
      if (std::string wrong = validator(text); !wrong.empty()) return name_ + " " + wrong;
    }
    if (!assign_(text)) return name_ + " must be a number, not '" + text + "'";
    return {};
  }

 private:
  std::string name_;
  std::string help_;
  std::function<bool(const std::string&)> assign_;
  std::vector<Validator> validators_;
  bool required_ = false;
};

class App {
 public:
  App(std::string description, std::string name)
      : description_(std::move(description)), name_(std::move(name)) {}

  template <class T>
  requires std::integral<T> || std::floating_point<T> Option* add_option(std::string name, T& value,
                                                                         std::string help) {
    auto assign = [&value](const std::string& text) {
      T parsed{};
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (ec != std::errc{} || end != text.data() + text.size()) return false;
      value = parsed;
      return true;
    };
    return &options_.emplace_back(std::move(name), std::move(help), std::move(assign));
  }

  void add_flag(std::string name, bool& value, std::string help) {
    flags_.push_back(Flag{std::move(name), std::move(help), &value});
  }

  [[nodiscard]] const std::string& get_name() const { return name_; }

  // Empty when every argument was taken, else what is wrong. Sets
  // `help_asked` on --help / -h.
  [[nodiscard]] std::string parse(int argc, char** argv, bool& help_asked) {
    std::vector<const Option*> positionals;
    for (const Option& option : options_) {
      if (option.positional()) positionals.push_back(&option);
    }
    std::size_t next_positional = 0;
    std::vector<const Option*> seen;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        help_asked = true;
        return {};
      }
      if (arg.starts_with("--")) {
        const std::size_t eq = arg.find('=');
        const std::string key = arg.substr(0, eq);
        if (Flag* flag = find_flag(key); flag != nullptr && eq == std::string::npos) {
          *flag->value = true;
          continue;
        }
        const Option* option = find_option(key);
        if (option == nullptr) return "unknown option " + key;
        std::string text;
        if (eq != std::string::npos) {
          text = arg.substr(eq + 1);
        } else if (i + 1 < argc) {
          text = argv[++i];
        } else {
          return key + " needs a value";
        }
        if (std::string wrong = option->set(text); !wrong.empty()) return wrong;
        seen.push_back(option);
        continue;
      }
      if (next_positional == positionals.size()) return "unexpected argument '" + arg + "'";
      const Option* option = positionals[next_positional++];
      if (std::string wrong = option->set(arg); !wrong.empty()) return wrong;
      seen.push_back(option);
    }
    for (const Option& option : options_) {
      if (!option.is_required()) continue;
      bool given = false;
      for (const Option* s : seen) given = given || s == &option;
      if (!given) return option.name() + " is required";
    }
    return {};
  }

  void print_help(const char* usage) const {
    std::printf("%s\nUsage: %s\n", description_.c_str(), usage);
    for (const Option& option : options_) {
      std::printf("  %-14s %s\n", option.name().c_str(), option.help().c_str());
    }
    for (const Flag& flag : flags_) {
      std::printf("  %-14s %s\n", flag.name.c_str(), flag.help.c_str());
    }
    std::printf("  %-14s %s\n", "-h, --help", "Print this help and exit");
  }

 private:
  struct Flag {
    std::string name;
    std::string help;
    bool* value;
  };

  Flag* find_flag(std::string_view name) {
    for (Flag& flag : flags_) {
      if (flag.name == name) return &flag;
    }
    return nullptr;
  }
  const Option* find_option(std::string_view name) const {
    for (const Option& option : options_) {
      if (option.name() == name) return &option;
    }
    return nullptr;
  }

  std::string description_;
  std::string name_;
  std::deque<Option> options_;  // a deque: the Option* handed out stay valid
  std::vector<Flag> flags_;
};

// Parses argv into the options of `app` (named after the program); returns
// only when they are good. `usage` is the short form printed with an error.
inline void parse(App& app, int argc, char** argv, const char* usage) {
  bool help_asked = false;
  const std::string wrong = app.parse(argc, argv, help_asked);
  if (help_asked) {
    app.print_help(usage);
    std::exit(0);
  }
  if (wrong.empty()) return;
  std::fprintf(stderr, "%s: %s; usage: %s\n", app.get_name().c_str(), wrong.c_str(), usage);
  std::exit(2);
}

}  // namespace example
