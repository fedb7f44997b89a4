#pragma once
// Parsing and printing JSON in tests, compiled once (support/json_text.cpp):
// nlohmann::json's parser and serializer are templates that every test file
// calling json::parse() or dump() would otherwise generate again, a tenth of
// the test programs' code (and of their compile time under the sanitizers).

#include <nlohmann/json.hpp>
#include <string>

namespace ferry::test {

// `text` as one JSON document; throws nlohmann::json::parse_error when it is
// not one.
[[nodiscard]] nlohmann::json parse_json(const std::string& text);

// `value` as compact JSON text (json::dump()); an ordered_json keeps its
// members in the order they were added.
[[nodiscard]] std::string json_text(const nlohmann::json& value);
[[nodiscard]] std::string json_text(const nlohmann::ordered_json& value);

}  // namespace ferry::test
