#include "harness/processes.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/machine.hpp"

namespace ferry::bench {

namespace {

int decode(int status) noexcept {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// In a fresh child: own process group, dies with the parent.
void detach_child(int death_signal, pid_t parent) noexcept {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, death_signal);
  if (::getppid() != parent) std::_Exit(1);  // the parent died before prctl
  SignalScope::restore_in_child();
}

}  // namespace

ChildGroup::~ChildGroup() {
  kill_all();
  reap(true);
}

pid_t ChildGroup::spawn(int cpu, const std::function<int()>& body) {
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot fork a benchmark process (fork failed)");
  if (pid == 0) {
    detach_child(SIGKILL, parent);
    ::signal(SIGPIPE, SIG_IGN);  // a dead peer is an error code, not a signal
    if (cpu >= 0) (void)pin_to_cpu(cpu);
    int code = 70;
    try {
      code = body();
    } catch (...) {
      code = 70;
    }
    std::fflush(nullptr);
    std::_Exit(code);  // no destructors, no atexit: this is a copy of the parent
  }
  children_.push_back(ChildStatus{pid, false, -1});
  return pid;
}

void ChildGroup::reap(bool block) noexcept {
  for (auto& c : children_) {
    if (c.done) continue;
    int status = 0;
    const pid_t r = ::waitpid(c.pid, &status, block ? 0 : WNOHANG);
    if (r == c.pid) {
      c.done = true;
      c.code = decode(status);
    } else if (r < 0) {
      c.done = true;  // not ours any more (cannot happen): stop waiting for it
    }
  }
}

void ChildGroup::kill_all() noexcept {
  for (const auto& c : children_) {
    if (!c.done) ::kill(c.pid, SIGKILL);
  }
}

ChildGroup::Outcome ChildGroup::wait_all(std::int64_t deadline_ns) {
  for (;;) {
    reap(false);
    bool all = true;
    for (const auto& c : children_) all = all && c.done;
    if (all) return Outcome::AllExited;
    if (signals_.interrupted()) {
      kill_all();
      reap(true);
      return Outcome::Interrupted;
    }
    const std::int64_t left = deadline_ns - now_ns();
    if (left <= 0) {
      kill_all();
      reap(true);
      return Outcome::TimedOut;
    }
    // Few wake-ups: the children are being measured on the other CPUs.
    signals_.wait(std::chrono::milliseconds(std::min<std::int64_t>(left / 1'000'000 + 1, 250)));
  }
}

pid_t spawn_program(const std::vector<std::string>& argv, int output_fd,
                    const std::vector<std::string>& env, int death_signal) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start " + argv.at(0) + " (fork failed)");
  if (pid == 0) {
    detach_child(death_signal, parent);
    if (output_fd >= 0) {
      ::dup2(output_fd, STDOUT_FILENO);
      ::dup2(output_fd, STDERR_FILENO);
    }
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  return pid;
}

bool child_running(pid_t pid, int* code) noexcept {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == 0) return true;
  if (code != nullptr) *code = r == pid ? decode(status) : -1;
  return false;
}

int stop_child(pid_t pid, std::chrono::milliseconds grace) noexcept {
  if (pid <= 0) return -1;
  int code = -1;
  if (!child_running(pid, &code)) return code;
  ::kill(pid, SIGTERM);
  const std::int64_t deadline = now_ns() + grace.count() * 1'000'000;
  while (now_ns() < deadline) {
    if (!child_running(pid, &code)) return code;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  if (::waitpid(pid, &status, 0) == pid) return decode(status);
  return -1;
}

std::string group_failure(const ChildGroup& group, ChildGroup::Outcome outcome,
                          std::string side_error, std::string_view timed_out_why) {
  if (!side_error.empty()) return side_error;
  if (outcome == ChildGroup::Outcome::TimedOut) return std::string(timed_out_why);
  for (const auto& c : group.children()) {
    if (c.code != 0) return fmt::format("a side exited with code {}", c.code);
  }
  return "no result";
}

}  // namespace ferry::bench
