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

// The first candidate at the smallest distance, if that distance is at most
// max(1, |word| / 3) (close enough to be a typo rather than another word).
[[nodiscard]] std::optional<std::string> closest(std::string_view word,
                                                 const std::vector<std::string_view>& candidates);

// "a, b, c".
[[nodiscard]] std::string join(const std::vector<std::string_view>& words);

}  // namespace ferry::config::detail
