#include "ferry/config/diagnostic.hpp"

#include <cassert>

#include "ferry/config/error.hpp"

namespace ferry::config {

std::string Diagnostic::to_string() const {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

namespace {
std::string first_message(const std::vector<Diagnostic>& diagnostics) {
  assert(!diagnostics.empty());
  return diagnostics.empty() ? "invalid configuration" : diagnostics.front().to_string();
}
}  // namespace

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(first_message(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace ferry::config
