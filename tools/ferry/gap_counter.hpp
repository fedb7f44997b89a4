#pragma once
// Samples a recorder missed: per publisher, the sequences between the last
// one it took and the next (docs/cpp-api.md: a gap is a sample this subscriber
// did not get). Keeps the first kMaxRanges ranges to name them.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ferry::cli {

class GapCounter {
 public:
  static constexpr std::size_t kMaxRanges = 16;

  struct Range {
    std::uint64_t publisher_id = 0;
    std::uint64_t first = 0;  // inclusive
    std::uint64_t last = 0;   // inclusive
  };

  // The sample `sequence` of `publisher_id` was taken.
  void taken(std::uint64_t publisher_id, std::uint64_t sequence);

  [[nodiscard]] std::uint64_t missed() const noexcept { return missed_; }
  [[nodiscard]] const std::vector<Range>& ranges() const noexcept { return ranges_; }
  // "publisher 3: 10-14, 20; publisher 5: 7" (and "..." past kMaxRanges),
  // or "" when nothing was missed.
  [[nodiscard]] std::string describe() const;

 private:
  std::map<std::uint64_t, std::uint64_t> next_;  // publisher -> the sequence expected next
  std::uint64_t missed_ = 0;
  std::vector<Range> ranges_;
  bool more_ranges_ = false;
};

}  // namespace ferry::cli
