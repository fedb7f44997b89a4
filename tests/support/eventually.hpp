#pragma once
// Waiting on a condition with a deadline: the one way tests synchronise with
// another thread or process (never a sleep of a guessed length).

#include <chrono>
#include <thread>

namespace ferry::test {

// Polls `condition` every `poll` until it holds (true) or `timeout` has
// passed (false). The result must be checked: a wait that ran out is a
// failure, not a reason to go on.
template <class F>
[[nodiscard]] bool eventually(F&& condition,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10),
                              std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace ferry::test
