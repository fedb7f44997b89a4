#pragma once
// One log line per interval for a repeated event: a flood of refused
// connections or failing accepts must not fill the disk nor cost the daemon
// its CPU. The next line that gets through says how many were suppressed.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace ferry::discovery {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LogLimiter(Clock::duration interval = std::chrono::seconds(1)) : interval_(interval) {}

  // Whether an event of kind `key` may be logged now. When it may,
  // `suppressed` is how many of that kind were swallowed since its last line.
  [[nodiscard]] bool allow(const std::string& key, std::uint64_t& suppressed,
                           Clock::time_point now = Clock::now());

 private:
  struct Kind {
    Clock::time_point last{};
    std::uint64_t suppressed = 0;
  };
  Clock::duration interval_;
  std::map<std::string, Kind> kinds_;  // a handful of fixed keys
};

}  // namespace ferry::discovery
