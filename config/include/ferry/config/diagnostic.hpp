#pragma once
// A problem found in a configuration, with where it is.

#include <cstddef>
#include <string>

namespace ferry::config {

// 1-based position in the source text; line 0 means "no position" (for
// instance a file that cannot be opened).
struct SourcePos {
  std::size_t line = 0;
  std::size_t column = 0;

  friend bool operator==(const SourcePos&, const SourcePos&) = default;
};

struct Diagnostic {
  std::string file;
  std::size_t line = 0;  // 1-based; 0 when there is no position
  std::size_t column = 0;
  std::string message;  // "what is wrong; what was expected"

  // "FILE:LINE:COL: message", or "FILE: message" without a position.
  [[nodiscard]] std::string to_string() const;
};

}  // namespace ferry::config
