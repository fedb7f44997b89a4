#pragma once
// The exception thrown by load_file/load_string.

#include <stdexcept>
#include <vector>

#include "ferry/config/diagnostic.hpp"

namespace ferry::config {

// what() is the first problem as "FILE:LINE:COL: what is wrong; what was
// expected"; diagnostics() holds every problem found, in source order.
class ConfigError : public std::runtime_error {
 public:
  // `diagnostics` must not be empty.
  explicit ConfigError(std::vector<Diagnostic> diagnostics);

  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }
  [[nodiscard]] const Diagnostic& first() const noexcept { return diagnostics_.front(); }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace ferry::config
