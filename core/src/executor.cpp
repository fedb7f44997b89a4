// Executor: one WaitSet sleep until the next timer is due; samples first
// (a bounded batch per subscriber, so a busy topic cannot starve timers),
// then the due timers.
#include "ferry/executor.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

#include "log_gate.hpp"

namespace ferry {

namespace {

// Samples one subscriber's callback gets per round before timers and the
// other subscribers have their turn.
constexpr std::size_t kBatch = 64;
// "Until stopped": spin() sleeps at most this long when no timer is due.
constexpr std::chrono::hours kLongSleep{1};

// Executors that asked for stop_on_signals(): the handler reads them, so
// they are plain atomic pointers in a fixed table (async-signal-safe).
constexpr std::size_t kSignalSlots = 16;
std::array<std::atomic<Executor*>, kSignalSlots> g_on_signals{};
std::mutex g_signals_mutex;  // registration (never taken by the handler)
std::size_t g_signal_users = 0;
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

void stop_all(int) {
  for (auto& slot : g_on_signals) {
    // SYNC: acquire, pairs with the release store in stop_on_signals():
    // the executor is fully built before we call it.
    if (Executor* e = slot.load(std::memory_order_acquire)) e->stop();
  }
}

}  // namespace

Executor::Executor() = default;

Executor::~Executor() {
  if (!on_signals_) return;
  std::lock_guard lock(g_signals_mutex);
  for (auto& slot : g_on_signals) {
    Executor* self = this;
    // SYNC: release; the handler sees the slot empty or still us (alive here).
    slot.compare_exchange_strong(self, nullptr, std::memory_order_release);
  }
  if (--g_signal_users == 0) {
    ::sigaction(SIGINT, &g_previous_int, nullptr);
    ::sigaction(SIGTERM, &g_previous_term, nullptr);
  }
}

void Executor::set_handler(std::size_t index, Handler handler) {
  if (handlers_.size() <= index) handlers_.resize(index + 1);
  handlers_[index] = std::move(handler);
}

void Executor::add_timer(std::chrono::nanoseconds period,
                         std::function<void(const Tick&)> callback) {
  if (period.count() <= 0) {
    throw Error(
        fmt::format("Executor::every: the period must be positive, not {} ns", period.count()));
  }
  timers_.push_back(Timer{period, std::chrono::steady_clock::now(), 1, std::move(callback)});
}

std::size_t Executor::run_due_timers() {
  std::size_t ran = 0;
  for (Timer& t : timers_) {
    const auto now = std::chrono::steady_clock::now();
    if (now < t.due()) continue;
    // Late by more than a period: one call, with the skipped ticks counted.
    const auto late = now - t.due();
    const auto missed = static_cast<std::uint64_t>(late / t.period);
    t.next += missed;
    const Tick tick{t.due(), now, missed, t.next};
    ++t.next;  // before the call: a throwing callback does not repeat its tick
    if (missed > 0)
      detail::log_line(spdlog::level::debug, "ferry executor: a {} ns timer missed {} ticks",
                       t.period.count(), missed);
    t.callback(tick);
    ++ran;
  }
  return ran;
}

std::size_t Executor::spin_once(std::chrono::nanoseconds timeout) {
  auto wait_for = timeout;
  if (!timers_.empty()) {
    const auto now = std::chrono::steady_clock::now();
    for (const Timer& t : timers_) {
      wait_for =
          std::min(wait_for, std::chrono::duration_cast<std::chrono::nanoseconds>(t.due() - now));
    }
  }
  const Ready ready = wait_set_.wait(std::max(wait_for, std::chrono::nanoseconds::zero()));
  std::size_t ran = 0;
  for (std::size_t index : ready) {
    if (index >= handlers_.size() || !handlers_[index]) continue;
    if (!wait_set_.attached(index)) {  // its subscriber was destroyed
      handlers_[index] = nullptr;
      continue;
    }
    handlers_[index](kBatch);
    ++ran;
  }
  return ran + run_due_timers();
}

void Executor::spin() {
  // SYNC: acquire/relaxed pairs with the release store in stop(); the flag
  // is consumed when spin() ends, so a stop() before spin() is not lost.
  while (!stop_.load(std::memory_order_acquire)) spin_once(kLongSleep);
  stop_.store(false, std::memory_order_relaxed);
}

void Executor::spin_for(std::chrono::nanoseconds duration) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  // SYNC: acquire, pairs with the release store in stop().
  while (!stop_.load(std::memory_order_acquire)) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    spin_once(std::chrono::duration_cast<std::chrono::nanoseconds>(left));
  }
  stop_.store(false, std::memory_order_relaxed);
}

void Executor::stop() noexcept {
  // SYNC: release, pairs with the acquire loads in spin()/spin_for().
  stop_.store(true, std::memory_order_release);
  wait_set_.notify();  // async-signal-safe
}

bool Executor::stopped() const noexcept {
  // SYNC: acquire, pairs with the release store in stop().
  return stop_.load(std::memory_order_acquire);
}

void Executor::stop_on_signals() {
  if (on_signals_) return;
  std::lock_guard lock(g_signals_mutex);
  auto free_slot = std::find_if(g_on_signals.begin(), g_on_signals.end(), [](const auto& slot) {
    return slot.load(std::memory_order_relaxed) == nullptr;  // SYNC: relaxed; under g_signals_mutex
  });
  if (free_slot == g_on_signals.end()) {
    throw Error(fmt::format("Executor::stop_on_signals: at most {} executors can stop on signals",
                            kSignalSlots));
  }
  if (g_signal_users == 0) {
    struct sigaction action {};
    action.sa_handler = stop_all;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, &g_previous_int);
    ::sigaction(SIGTERM, &action, &g_previous_term);
  }
  ++g_signal_users;
  // SYNC: release, pairs with the acquire load in stop_all().
  free_slot->store(this, std::memory_order_release);
  on_signals_ = true;
}

}  // namespace ferry
