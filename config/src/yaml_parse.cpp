// YAML::LoadAll in yaml-cpp 0.7 loops forever, allocating a null document
// per turn, on input the parser does not consume: a lone ',' is enough
// (jbeder/yaml-cpp#1040, fixed upstream by #1319 after 0.8). So documents
// are counted here with a bounded loop that notices when the parser is
// stuck, and YAML::Load (a single turn) builds the first one.

#include "yaml_parse.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <vector>

#include "ferry/config/limits.hpp"

namespace ferry::config::detail {

namespace {
SourcePos to_pos(const YAML::Mark& mark) {
  if (mark.is_null()) return {1, 1};
  return {static_cast<std::size_t>(mark.line) + 1, static_cast<std::size_t>(mark.column) + 1};
}

// Remembers where each document starts and where its first node is, and
// counts the first document's nodes as its readers will see them: an alias
// is a whole copy of its anchor's node. yaml-cpp shares an aliased node
// instead of copying it, so a small file of nested aliases parses in no
// time, but reading it walks every copy (a list of 20,000 users aliased by
// 5,000 topics is 100 million strings): the count stops that before it starts.
class DocumentStarts final : public YAML::EventHandler {
 public:
  YAML::Mark start;
  std::optional<YAML::Mark> first_node;
  std::optional<YAML::Mark> too_large;  // the alias that took the count past the limit

  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    first_node.reset();
    ++documents_;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    node(mark);
    count(mark, 1);
    done(anchor, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    node(mark);
    const auto it = sizes_.find(anchor);
    const std::uint64_t size = it == sizes_.end() ? 1 : it->second;
    count(mark, size);
    done(0, size);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    node(mark);
    count(mark, 1);
    done(anchor, 1);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    node(mark);
    count(mark, 1);
    open_.push_back({anchor, 1});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    node(mark);
    count(mark, 1);
    open_.push_back({anchor, 1});
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t size;  // nodes in it so far, itself included, aliases expanded
  };
  void node(const YAML::Mark& mark) {
    if (!first_node) first_node = mark;
  }
  // The document's nodes as read: one per node event, an alias's whole size.
  void count(const YAML::Mark& mark, std::uint64_t nodes) {
    if (documents_ != 1) return;  // only the first document is read
    // Saturates just past the limit: no overflow however deep the nesting.
    total_ = std::min(total_ + nodes, kMaxYamlNodes + 1);
    if (total_ > kMaxYamlNodes && !too_large) too_large = mark;
  }
  // A node of `size` nodes (aliases expanded) ends: the one that holds it
  // grows by as much, and an anchored one is remembered for its aliases.
  void done(YAML::anchor_t anchor, std::uint64_t size) {
    if (anchor != 0) sizes_[anchor] = size;
    if (!open_.empty()) open_.back().size = std::min(open_.back().size + size, kMaxYamlNodes + 1);
  }
  void close() {
    if (open_.empty()) return;
    const Open o = open_.back();
    open_.pop_back();
    done(o.anchor, o.size);
  }
  int documents_ = 0;
  std::vector<Open> open_;
  std::map<YAML::anchor_t, std::uint64_t> sizes_;
  std::uint64_t total_ = 0;
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
      if (starts.too_large) {
        return std::unexpected(YamlSyntaxError{
            to_pos(*starts.too_large),
            "with its aliases expanded the file holds more than " + std::to_string(kMaxYamlNodes) +
                " YAML nodes, the most a configuration may have (an alias copies its anchor's "
                "whole node each time it is used)",
            true});
      }
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
