#pragma once
// Running `ferry` in the background (echo, hz, top...) while a test drives a
// domain: output captured in files of the test domain's runtime directory,
// or a pseudo-terminal for `ferry top`. Every program is killed and reaped
// when its handle dies.

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "json_text.hpp"
#include "temp_files.hpp"
#include "test_domain.hpp"

namespace ferry::test {

// A program whose stdout and stderr go to files while it runs.
class Background {
 public:
  Background(const TestDomain& domain, const std::vector<std::string>& argv) {
    static std::atomic<int> counter{0};
    const std::string stem = (domain.runtime_dir() / ("bg" + std::to_string(counter++))).string();
    out_path_ = stem + ".out";
    err_path_ = stem + ".err";
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(out, 1);
      ::dup2(err, 2);
      exec_in_domain(domain, argv);
    }
  }
  ~Background() { kill_and_reap(pid_); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Exit code, 128+signal, or -1 when it had to be killed after `timeout`.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const int code = wait_exit(pid_, timeout);
    pid_ = -1;
    return code;
  }
  [[nodiscard]] std::string out() const { return read_file(out_path_); }
  [[nodiscard]] std::string err() const { return read_file(err_path_); }
  // Waits until stdout contains `text`.
  bool out_contains(const std::string& text,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    return eventually([&] { return out().find(text) != std::string::npos; }, timeout,
                      std::chrono::milliseconds(10));
  }

 private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
};

// A program on a pseudo-terminal of 80 x 24, as a user at a terminal runs it.
class OnTerminal {
 public:
  OnTerminal(const TestDomain& domain, const std::vector<std::string>& argv) {
    winsize size{};
    size.ws_row = 24;
    size.ws_col = 80;
    std::fflush(nullptr);
    pid_ = ::forkpty(&master_, nullptr, nullptr, &size);
    if (pid_ == 0) exec_in_domain(domain, argv);
  }
  ~OnTerminal() {
    kill_and_reap(pid_);
    if (master_ >= 0) ::close(master_);
  }
  OnTerminal(const OnTerminal&) = delete;
  OnTerminal& operator=(const OnTerminal&) = delete;

  [[nodiscard]] bool started() const noexcept { return pid_ > 0 && master_ >= 0; }
  // Reads what the program drew until the screen shows `text`.
  bool shows(const std::string& text,
             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (screen_.find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      drain(std::chrono::milliseconds(50));
    }
    return true;
  }
  void type(const std::string& keys) const {
    [[maybe_unused]] const ssize_t n = ::write(master_, keys.data(), keys.size());
  }
  // Exit code once it ends (reading the terminal meanwhile, so it never blocks).
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        kill_and_reap(pid_);
        pid_ = -1;
        return -1;
      }
      drain(std::chrono::milliseconds(20));
    }
    drain(std::chrono::milliseconds(0));
    pid_ = -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  }
  [[nodiscard]] const std::string& screen() const noexcept { return screen_; }

 private:
  void drain(std::chrono::milliseconds wait) {
    pollfd fd{master_, POLLIN, 0};
    if (::poll(&fd, 1, static_cast<int>(wait.count())) <= 0) return;
    char buf[4096];
    const ssize_t n = ::read(master_, buf, sizeof buf);
    if (n > 0) screen_.append(buf, static_cast<std::size_t>(n));
  }

  pid_t pid_ = -1;
  int master_ = -1;
  std::string screen_;
};

// Runs `ferry ARGS... --json` and parses its stdout; fails the test on a
// non-zero exit.
inline nlohmann::json ferry_json(const TestDomain& domain, std::vector<std::string> args) {
  args.insert(args.begin(), bin_path("ferry"));
  args.push_back("--json");
  const auto r = run_program(domain, args);
  if (r.exit_code != 0) {
    throw std::runtime_error("ferry exited " + std::to_string(r.exit_code) + ": " + r.err);
  }
  return ferry::test::parse_json(r.out);
}

}  // namespace ferry::test
