// The one copy of nlohmann::json's parser and serializer the tests link.
#include "json_text.hpp"

namespace ferry::test {

nlohmann::json parse_json(const std::string& text) { return nlohmann::json::parse(text); }

std::string json_text(const nlohmann::json& value) { return value.dump(); }
std::string json_text(const nlohmann::ordered_json& value) { return value.dump(); }

}  // namespace ferry::test
