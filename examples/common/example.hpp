#pragma once
// What the control, fan_in and bytes examples share, so that each program
// shows only its ferry part: waiting for a first subscriber, pacing, taking
// with a bounded wait (so that every program ends on its own), and the exit
// codes: 0 ok, 1 failure, each failure being one line on stderr (2 for a bad
// argument: cli.hpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace example {

// Waits until the publisher sees a subscriber. A publisher that starts
// before its subscribers would otherwise publish into no queue at all.
template <class Publisher>
bool wait_for_subscriber(const Publisher& pub,
                         std::chrono::seconds limit = std::chrono::seconds(10)) {
  return pub.wait_for_subscribers(1, limit);
}

// Paces a publishing loop at a rate: wait() sleeps until the next period.
// After a late round (a publish that blocked) it goes on from now rather
// than catching up in a burst.
class Pacer {
 public:
  explicit Pacer(double rate_hz) { set_rate(rate_hz); }
  void set_rate(double rate_hz) {
    period_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / rate_hz));
  }
  void wait() {
    next_ = std::max(next_ + period_, std::chrono::steady_clock::now());
    std::this_thread::sleep_until(next_);
  }

 private:
  std::chrono::steady_clock::duration period_{};
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now();
};

// The steady clock in nanoseconds, for stamps that another process reads.
inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// How long a subscriber waits for its first sample (its publisher may be
// started by hand a little later), then between two samples before it
// decides its publishers are gone. Either way it ends on its own.
inline constexpr std::chrono::seconds kFirstSampleWait{10};
inline constexpr std::chrono::seconds kIdleWait{2};

// A failure the program reports and ends with (exit 1).
[[noreturn]] inline void fail(const std::string& message) { throw std::runtime_error(message); }

// Takes the next sample, the `received`+1-th, waiting as said above; none in
// time is a failure saying what was still `expected`.
template <class Subscriber>
auto next_sample(Subscriber& sub, std::uint64_t received, std::string_view expected) {
  const auto wait = received == 0 ? kFirstSampleWait : kIdleWait;
  auto sample = sub.take(wait);
  if (!sample) {
    fail("nothing on " + sub.topic() + " for " + std::to_string(wait.count()) + " s after " +
         std::to_string(received) + " sample(s); expected " + std::string(expected));
  }
  return std::move(*sample);
}

// Runs a program's body: an exception becomes one line on stderr, prefixed
// by the program's name, and exit code 1 (such as a ferry::Error when
// ferryd is not running).
template <class Body>
int run(const char* program, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace example
