#pragma once
// Reading a program's text output: its lines, the words of a line, and the
// words of the line a table row starts with.

#include <sstream>
#include <string>
#include <vector>

namespace ferry::test {

// The lines of `text`, without their '\n'.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The whitespace-separated words of `line`.
inline std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The words of the last line of `text` that starts with `prefix` (empty when
// none does).
inline std::vector<std::string> last_line_words(const std::string& text,
                                                const std::string& prefix) {
  std::vector<std::string> words;
  for (const auto& line : lines_of(text)) {
    if (line.starts_with(prefix)) words = words_of(line);
  }
  return words;
}

}  // namespace ferry::test
