#pragma once
// The log lines of the bytes example: line i is always the same text, so
// that the test can check every byte that log_tail received. Most lines are
// short; now and then one carries a long dump, one of them exactly
// kMaxLine, the max_size of logs/text in bytes.yaml.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

inline constexpr std::size_t kMaxLine = 64 * 1024;

inline std::string log_line(std::uint64_t i) {
  static constexpr std::size_t kSizes[] = {48, 130, 72, 1500, 96, 9000, 60, 30000, kMaxLine};
  static constexpr std::string_view kLevels[] = {"INFO", "DEBUG", "WARN"};
  static constexpr std::string_view kWords = "the quick brown fox jumps over the lazy dog ";
  const std::size_t size = kSizes[i % std::size(kSizes)];
  std::string line = std::string(kLevels[i % std::size(kLevels)]) + " worker-" +
                     std::to_string(i % 4) + " request " + std::to_string(i) + ": ";
  line.reserve(size);
  for (std::size_t j = 0; line.size() < size; ++j) line += kWords[j % kWords.size()];
  line.resize(size);
  return line;
}
