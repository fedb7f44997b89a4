#pragma once
// Parsing the YAML text into one document, working around yaml-cpp 0.7.

#include <yaml-cpp/yaml.h>

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/config/diagnostic.hpp"

namespace ferry::config::detail {

struct ParsedYaml {
  YAML::Node root;                           // the first document (Null when empty)
  std::optional<SourcePos> second_document;  // where a second document starts
};

struct YamlSyntaxError {
  SourcePos pos;
  std::string what;        // yaml-cpp's message, e.g. "end of map flow not found"
  bool too_large = false;  // well-formed, but past kMaxYamlNodes (`what` says so)
};

// Never loops forever and never throws a yaml-cpp exception.
[[nodiscard]] std::expected<ParsedYaml, YamlSyntaxError> parse_yaml(std::string_view text);

}  // namespace ferry::config::detail
