#pragma once
// The window behind `ferry topic hz|bw` (rate_stats.hpp) and `ferry topic
// delay` (delay_stats.hpp): the last `capacity` values of a topic's samples,
// each with the time it was taken (the oldest go first), and how many were
// ever added.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace ferry::cli {

template <class T>
class TimedWindow {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TimedWindow(std::size_t capacity) : capacity_(capacity) {}

  void add(Clock::time_point at, T value) {
    entries_.push_back({at, value});
    if (entries_.size() > capacity_) entries_.pop_front();
    ++total_;
  }
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }

 protected:
  struct Entry {
    Clock::time_point at;
    T value;
  };
  std::deque<Entry> entries_;

 private:
  std::size_t capacity_;
  std::uint64_t total_ = 0;
};

}  // namespace ferry::cli
