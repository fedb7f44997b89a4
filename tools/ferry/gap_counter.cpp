#include "gap_counter.hpp"

#include <fmt/format.h>

namespace ferry::cli {

void GapCounter::taken(std::uint64_t publisher_id, std::uint64_t sequence) {
  const auto [it, first] = next_.try_emplace(publisher_id, sequence + 1);
  if (first) return;  // samples before the first one taken were never ours
  const std::uint64_t expected = it->second;
  // A sequence at or below the expected one (a publisher that restarted
  // with the same id) starts counting afresh rather than as a huge gap.
  if (sequence > expected) {
    missed_ += sequence - expected;
    if (ranges_.size() < kMaxRanges)
      ranges_.push_back(Range{publisher_id, expected, sequence - 1});
    else
      more_ranges_ = true;
  }
  it->second = sequence + 1;
}

std::string GapCounter::describe() const {
  std::string out;
  std::uint64_t publisher = 0;
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const Range& r = ranges_[i];
    if (i == 0 || r.publisher_id != publisher) {
      if (i != 0) out += "; ";
      out += fmt::format("publisher {}: ", r.publisher_id);
      publisher = r.publisher_id;
    } else {
      out += ", ";
    }
    out += r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last);
  }
  if (more_ranges_) out += ", ...";
  return out;
}

}  // namespace ferry::cli
