#pragma once
// A program's JSON-lines output (`--json` of the streaming verbs, `ferry
// bench`): one JSON document per non-empty line.

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "json_text.hpp"

namespace ferry::test {

// Throws nlohmann::json::parse_error on a line that is not JSON.
inline std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(parse_json(line));
  }
  return lines;
}

}  // namespace ferry::test
