#pragma once
// The processes a benchmark starts: forked sides of a run and the exec'd
// ferryd. Each is tracked by its pid, and only by its pid: stopped with a
// signal to that pid, reaped with waitpid on it. Every child dies with us
// (PR_SET_PDEATHSIG) and lives in its own process group, so that a Ctrl-C on
// the terminal reaches only the orchestrator, which then stops them in order.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/signals.hpp"

namespace ferry::bench {

// How a child ended: its exit code, 128+signal when killed, -1 unknown.
struct ChildStatus {
  pid_t pid = -1;
  bool done = false;
  int code = -1;
};

// The forked sides of one run.
class ChildGroup {
 public:
  explicit ChildGroup(SignalScope& signals) : signals_(signals) {}
  ~ChildGroup();  // SIGKILLs and reaps any child still running
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  // Forks a child pinned to `cpu` (-1: not pinned) that runs `body` and
  // exits with its return value (70 when it throws). The child never returns
  // into the caller.
  pid_t spawn(int cpu, const std::function<int()>& body);

  enum class Outcome : std::uint8_t { AllExited, TimedOut, Interrupted };
  // Waits until every child exited; at `deadline_ns` (now_ns clock) or on an
  // interrupt, SIGKILLs the rest and reaps them.
  Outcome wait_all(std::int64_t deadline_ns);
  [[nodiscard]] const std::vector<ChildStatus>& children() const noexcept { return children_; }

 private:
  void reap(bool block) noexcept;
  void kill_all() noexcept;
  SignalScope& signals_;
  std::vector<ChildStatus> children_;
};

// Why a run failed, from what its sides left behind: the first error a side
// reported (`side_error`), else `timed_out_why` when the group ran out of
// time, else the first side's nonzero exit code, else "no result".
std::string group_failure(const ChildGroup& group, ChildGroup::Outcome outcome,
                          std::string side_error, std::string_view timed_out_why);

// fork + exec of `argv` (argv[0] a path) with stdout and stderr sent to
// `output_fd` and `env` (NAME=VALUE) added; in its own process group; sent
// `death_signal` when we die. Throws std::runtime_error when fork fails.
pid_t spawn_program(const std::vector<std::string>& argv, int output_fd,
                    const std::vector<std::string>& env, int death_signal);

// Is `pid` (our child) still running? Reaps it when not; `code` gets its status.
bool child_running(pid_t pid, int* code = nullptr) noexcept;

// SIGTERM to `pid`, then SIGKILL after `grace`; reaps it. Returns its status.
int stop_child(pid_t pid, std::chrono::milliseconds grace) noexcept;

}  // namespace ferry::bench
