#pragma once
// Signals while a benchmark runs. SIGINT, SIGTERM, SIGHUP and SIGCHLD are
// blocked in the orchestrating process and collected with sigtimedwait while
// it waits for its children, so an interrupt is noticed within one wait and
// everything started is stopped and removed before we exit; no handler runs
// at a random point. Children get the original mask back (restore_in_child).

#include <signal.h>

#include <chrono>

namespace ferry::bench {

class SignalScope {
 public:
  SignalScope();
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  // Waits up to `timeout` for SIGCHLD or an interrupt (returns at once when
  // one is pending). Remembers an interrupt for interrupted().
  void wait(std::chrono::milliseconds timeout) noexcept;
  // True once SIGINT, SIGTERM or SIGHUP arrived (checks without waiting).
  [[nodiscard]] bool interrupted() noexcept;

  // In a forked child: the signal mask and dispositions the program started with.
  static void restore_in_child() noexcept;

 private:
  sigset_t old_mask_{};
  bool interrupted_ = false;
};

}  // namespace ferry::bench
