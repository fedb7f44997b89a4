#pragma once
// Typed access to yaml-cpp nodes that reports every problem with its
// position instead of throwing, so that one pass finds all errors.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"
#include "ferry/config/policy.hpp"
#include "quote.hpp"
#include "suggest.hpp"

namespace ferry::config::detail {

// 1-based position of a node (yaml-cpp's Mark is 0-based).
[[nodiscard]] SourcePos pos_of(const YAML::Node& node);
// "12:5", for "first declared at ..." messages.
[[nodiscard]] std::string to_string(SourcePos pos);

// One key of a map. value_pos is the key's position when the value is
// missing (yaml-cpp marks a missing value at the next token).
struct Entry {
  std::string key;
  YAML::Node value;
  SourcePos key_pos;
  SourcePos value_pos;
};

[[nodiscard]] const Entry* find(const std::vector<Entry>& entries, std::string_view key);

class Reader {
 public:
  Reader(std::string file, std::vector<Diagnostic>& out) : file_(std::move(file)), out_(out) {}

  void error(SourcePos pos, std::string message);
  [[nodiscard]] std::size_t error_count() const noexcept { return out_.size(); }
  // Shared by every "did you mean" among declared names in one file.
  [[nodiscard]] SuggestBudget& suggestions() noexcept { return suggestions_; }

  // The node must be a map / list; `what` names it in the message
  // ("'topics'", "item 2 of 'fields'"), `example` shows the expected shape.
  bool expect_map(const YAML::Node& node, SourcePos pos, std::string_view what,
                  std::string_view example = {});
  bool expect_list(const YAML::Node& node, SourcePos pos, std::string_view what,
                   std::string_view example = {});

  // The entries of a map with a fixed set of keys; unknown keys (with the
  // closest valid one) and repeated keys are reported and left out. `where`
  // completes "unknown key 'x' ...", e.g. "in topic 'robot/pose'".
  [[nodiscard]] std::vector<Entry> entries(const YAML::Node& map, std::string_view where,
                                           const std::vector<std::string_view>& keys);
  // Every entry of a free-form map (keys must be scalars).
  [[nodiscard]] std::vector<Entry> all_entries(const YAML::Node& map);

  // Values. Each reports what is wrong and returns nullopt.
  [[nodiscard]] std::optional<std::uint64_t> integer(const Entry& e, std::uint64_t min,
                                                     std::uint64_t max);
  [[nodiscard]] std::optional<std::uint64_t> size(const Entry& e, std::uint64_t min,
                                                  std::uint64_t max);
  [[nodiscard]] std::optional<std::string> string(const Entry& e);
  [[nodiscard]] std::optional<bool> boolean(const Entry& e);
  [[nodiscard]] std::optional<Policy> policy(const Entry& e);
  [[nodiscard]] std::optional<std::vector<std::string>> string_list(const Entry& e);

 private:
  bool expect_scalar(const Entry& e, std::string_view expected);
  void wrong_type(const YAML::Node& node, SourcePos pos, std::string_view what,
                  std::string_view expected);

  std::string file_;
  std::vector<Diagnostic>& out_;
  SuggestBudget suggestions_;
};

}  // namespace ferry::config::detail
