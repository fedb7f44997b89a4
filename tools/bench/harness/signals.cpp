#include "harness/signals.hpp"

#include <cerrno>
#include <ctime>

namespace ferry::bench {

namespace {

sigset_t g_original_mask;  // the mask before the (one) SignalScope; for children

sigset_t watched() noexcept {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGCHLD);
  return set;
}

}  // namespace

SignalScope::SignalScope() {
  const sigset_t set = watched();
  ::sigprocmask(SIG_BLOCK, &set, &old_mask_);
  g_original_mask = old_mask_;
}

SignalScope::~SignalScope() {
  // Consume what is pending (a SIGCHLD of ours) so that unblocking does not
  // deliver it; an interrupt stays pending and acts once unblocked only if
  // we did not see it (we saw it: the caller exits with 130 anyway).
  const sigset_t set = watched();
  const timespec zero{0, 0};
  while (::sigtimedwait(&set, nullptr, &zero) > 0) {
  }
  ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

void SignalScope::wait(std::chrono::milliseconds timeout) noexcept {
  const sigset_t set = watched();
  const auto ms = timeout.count() < 0 ? 0 : timeout.count();
  const timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1'000'000};
  const int sig = ::sigtimedwait(&set, nullptr, &ts);
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) interrupted_ = true;
}

bool SignalScope::interrupted() noexcept {
  if (interrupted_) return true;
  sigset_t pending;
  sigemptyset(&pending);
  if (::sigpending(&pending) == 0 &&
      (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) ||
       sigismember(&pending, SIGHUP))) {
    wait(std::chrono::milliseconds(0));
  }
  return interrupted_;
}

void SignalScope::restore_in_child() noexcept {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &g_original_mask, nullptr);
}

}  // namespace ferry::bench
