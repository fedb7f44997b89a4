// YAML::LoadAll in yaml-cpp 0.7 loops forever, allocating a null document
// per turn, on input the parser does not consume: a lone ',' is enough
// (jbeder/yaml-cpp#1040, fixed upstream by #1319 after 0.8). So documents
// are counted here with a bounded loop that notices when the parser is
// stuck, and YAML::Load (a single turn) builds the first one.

#include "yaml_parse.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace ferry::config::detail {

namespace {
SourcePos to_pos(const YAML::Mark& mark) {
  if (mark.is_null()) return {1, 1};
  return {static_cast<std::size_t>(mark.line) + 1, static_cast<std::size_t>(mark.column) + 1};
}

// Remembers where each document starts and where its first node is.
class DocumentStarts final : public YAML::EventHandler {
 public:
  YAML::Mark start;
  std::optional<YAML::Mark> first_node;

  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    first_node.reset();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark) {
    if (!first_node) first_node = mark;
  }
};

YamlSyntaxError syntax_error(const YAML::Exception& e) { return {to_pos(e.mark), e.msg}; }
// yaml-cpp's depth guard (2000 levels) says only "bad file".
YamlSyntaxError syntax_error(const YAML::DeepRecursion& e) {
  return {to_pos(e.mark), "nesting deeper than " + std::to_string(e.depth()) + " levels"};
}
}  // namespace

std::expected<ParsedYaml, YamlSyntaxError> parse_yaml(std::string_view text) {
  ParsedYaml out;
  try {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    DocumentStarts starts;
    // Two turns at most: we only need to know whether a second document exists.
    if (parser.HandleNextDocument(starts)) {
      const int first_pos = starts.start.pos;
      if (parser.HandleNextDocument(starts)) {
        if (starts.start.pos == first_pos) {
          // The parser did not move: a token it cannot place.
          const auto at = static_cast<std::size_t>(first_pos);
          const std::string token = at < text.size() ? std::string(1, text[at]) : "end of input";
          return std::unexpected(
              YamlSyntaxError{to_pos(starts.start), "unexpected '" + token + "'"});
        }
        out.second_document = to_pos(starts.first_node.value_or(starts.start));
      }
    }
    out.root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    return std::unexpected(syntax_error(e));
  } catch (const YAML::Exception& e) {
    return std::unexpected(syntax_error(e));
  }
  return out;
}

}  // namespace ferry::config::detail
