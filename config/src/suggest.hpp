#pragma once
// "Did you mean ...?": the closest valid word to a misspelt one.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::config::detail {

// Optimal string alignment distance (insert, delete, substitute, swap two
// neighbours), ignoring ASCII case so that "Capacity" suggests "capacity".
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// Words longer than this get no suggestion: a typo of a name is short, and
// the distance costs |word| x |candidate|.
inline constexpr std::size_t kMaxSuggestedWordLength = 128;

// The first candidate at the smallest distance, if that distance is at most
// max(1, |word| / 3) (close enough to be a typo rather than another word).
// Candidates whose length alone puts them further are skipped unmeasured.
[[nodiscard]] std::optional<std::string> closest(std::string_view word,
                                                 const std::vector<std::string_view>& candidates);

// closest() for at most kMaxSuggestions words per configuration: every
// call measures the word against every candidate, so thousands of misspelt
// names against thousands of declared ones would be quadratic. Later words
// get nullopt, and their messages list what is valid instead.
class SuggestBudget {
 public:
  [[nodiscard]] bool exhausted() const noexcept;
  [[nodiscard]] std::optional<std::string> closest(std::string_view word,
                                                   const std::vector<std::string_view>& candidates);

 private:
  std::size_t used_ = 0;
};

// "a, b, c".
[[nodiscard]] std::string join(const std::vector<std::string_view>& words);

}  // namespace ferry::config::detail
