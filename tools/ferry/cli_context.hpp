#pragma once
// What every `ferry` verb shares: the global flags and the way it fails.

#include <stdexcept>
#include <string>

namespace ferry::cli {

// Exit codes (docs/cli/index.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // daemon unreachable, unknown topic, ...
inline constexpr int kExitUsage = 2;    // bad flags or configuration

// Thrown by a verb: main prints "ferry: <what>" and exits with `code`.
class Failure : public std::runtime_error {
 public:
  Failure(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

struct Context {
  std::string domain_flag;    // --domain; empty: FERRY_DOMAIN, else "default"
  bool domain_given = false;  // --domain was on the command line (even as "")
  // --domain may be given before the verb and after it (each level of the
  // command has its own option); both store here. Giving two different names
  // is a usage error rather than a silent pick: the result is then why (and
  // nothing is stored), else empty.
  [[nodiscard]] std::string set_domain_flag(const std::string& name);
  // The domain the verb works on (resolved from --domain and FERRY_DOMAIN).
  [[nodiscard]] std::string domain() const;
};

}  // namespace ferry::cli
