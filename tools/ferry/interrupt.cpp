#include "interrupt.hpp"

#include <signal.h>

#include <atomic>

namespace ferry::cli {

namespace {
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);  // safe in a signal handler

extern "C" void on_signal(int /*signal*/) {
  // SYNC: relaxed; the loops only poll it, it guards no data.
  g_interrupted.store(true, std::memory_order_relaxed);
}
}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() noexcept { return g_interrupted.load(std::memory_order_relaxed); }

}  // namespace ferry::cli
