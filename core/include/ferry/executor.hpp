#pragma once
/// @file
/// A single-threaded executor (docs/waiting.md): callbacks for every sample of
/// its subscribers, in order, and timers with absolute deadlines, run on the
/// thread that calls spin(). It sleeps in one WaitSet between them.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferry/error.hpp"
#include "ferry/service.hpp"
#include "ferry/subscriber.hpp"
#include "ferry/wait_set.hpp"

namespace ferry {

/// What a timer callback is told about its tick.
struct Tick {
  std::chrono::steady_clock::time_point deadline;  ///< when this tick was due (start + n * period)
  std::chrono::steady_clock::time_point now;       ///< when the callback was called
  /// Ticks skipped just before this one because the executor was late by
  /// more than a period (0 when on time): reported, never silently dropped.
  std::uint64_t missed = 0;
  std::uint64_t number = 0;  ///< this tick's n (1 for the first, missed ones counted)
};

/// Runs callbacks for samples and timers on the thread that calls spin(),
/// sleeping in one WaitSet between them.
class Executor {
 public:
  /// An executor with nothing to do.
  Executor();
  /// Also ends stop_on_signals() for this executor (the previous handlers
  /// come back with the last executor that asked for them).
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Calls `callback(sample)` for every sample of `subscriber`, in order (its
  /// argument: const Sample<T>&, Sample<T>&& or Sample<T>). The subscriber
  /// must outlive the executor or be destroyed on the spinning thread.
  /// Throws ferry::Error as WaitSet::attach does.
  template <class T, class F>
  void on(Subscriber<T>& subscriber, F&& callback) {
    const std::size_t index = wait_set_.attach(subscriber);
    set_handler(index, [&subscriber, cb = std::forward<F>(callback)](std::size_t budget) mutable {
      for (std::size_t n = 0; n < budget; ++n) {
        auto taken = subscriber.try_take();
        if (!taken) {
          if (taken.error() == ErrorCode::TooManyHeld) return false;  // the user holds them all
          throw Error(std::string("subscriber of topic '") + subscriber.topic() +
                      "': " + to_string(taken.error()));
        }
        if (!taken->has_value()) return false;
        cb(std::move(**taken));  // a throw releases the sample on the way out
      }
      return true;  // more may wait: the next round goes on (timers first)
    });
  }

  /// Serves `server` (docs/services.md): `callback(const Req&)` returns the
  /// Resp that answers each request, in order. A callback that throws
  /// leaves its request unanswered (the client gets NoResponse) and the
  /// exception leaves spin().
  template <class Req, class Resp, class F>
  void serve(Server<Req, Resp>& server, F&& callback) {
    const std::size_t index = wait_set_.attach(server);
    set_handler(index, [&server, cb = std::forward<F>(callback)](std::size_t budget) mutable {
      for (std::size_t n = 0; n < budget; ++n) {
        auto taken = server.try_take_request();
        if (!taken) {
          if (taken.error() == ErrorCode::TooManyHeld) return false;
          throw Error(std::string("server of service '") + server.service() +
                      "': " + to_string(taken.error()));
        }
        if (!taken->has_value()) return false;
        auto& request = **taken;
        request.respond(cb(*request));
      }
      return true;
    });
  }

  /// Calls `callback()` or `callback(const Tick&)` at start + n * period for
  /// n = 1, 2, ...: absolute deadlines, so lateness never accumulates. A tick
  /// more than a period late is called once, with Tick::missed counting the
  /// ticks skipped. Throws ferry::Error for a period <= 0.
  template <class F>
  void every(std::chrono::nanoseconds period, F&& callback) {
    if constexpr (std::is_invocable_v<F&, const Tick&>) {
      add_timer(period, std::function<void(const Tick&)>(std::forward<F>(callback)));
    } else {
      add_timer(period, [cb = std::forward<F>(callback)](const Tick&) mutable { cb(); });
    }
  }

  /// Runs callbacks until stop(); a callback's exception ends it (and
  /// propagates), with no sample left half-taken.
  void spin();
  /// Waits up to `timeout` for work (less when a timer is due sooner), runs
  /// what is ready; returns how many callbacks ran.
  std::size_t spin_once(std::chrono::nanoseconds timeout);
  /// spin() for `duration` (or until stop()).
  void spin_for(std::chrono::nanoseconds duration);
  /// Ends spin()/spin_for() at their next return point: any thread,
  /// async-signal-safe. A stop() before spin() makes it return at once.
  void stop() noexcept;
  /// SIGINT and SIGTERM call stop() (on every executor that asked).
  void stop_on_signals();
  /// Whether stop() was called.
  [[nodiscard]] bool stopped() const noexcept;

  /// The WaitSet the executor sleeps in (e.g. to attach it to nothing else
  /// but to notify() it).
  [[nodiscard]] WaitSet& wait_set() noexcept { return wait_set_; }

 private:
  // Returns true when it stopped at its budget with samples left.
  using Handler = std::function<bool(std::size_t budget)>;
  struct Timer {
    std::chrono::nanoseconds period;
    std::chrono::steady_clock::time_point start;
    std::uint64_t next = 1;  // the n of the next tick
    std::function<void(const Tick&)> callback;
    [[nodiscard]] std::chrono::steady_clock::time_point due() const noexcept {
      return start + period * static_cast<std::int64_t>(next);
    }
  };
  void set_handler(std::size_t index, Handler handler);
  void add_timer(std::chrono::nanoseconds period, std::function<void(const Tick&)> callback);
  std::size_t run_due_timers();

  WaitSet wait_set_;
  std::vector<Handler> handlers_;  // by attachment index
  std::vector<Timer> timers_;
  std::atomic<bool> stop_{false};
  bool on_signals_ = false;
};

}  // namespace ferry
