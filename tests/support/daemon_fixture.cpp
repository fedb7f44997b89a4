#include "daemon_fixture.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "ferry/discovery/socket.hpp"

namespace ferry::test {

std::string bin_path(const std::string& program) {
  const char* dir = std::getenv("FERRY_BIN_DIR");
  return std::string(dir != nullptr ? dir : "build/bin") + "/" + program;
}

std::string support_path(const std::string& name) {
  return std::string(FERRY_TEST_SUPPORT_DIR) + "/" + name;
}

void use_domain_env(const TestDomain& domain) {
  ::setenv("FERRY_DOMAIN", domain.name().c_str(), 1);
  ::setenv("FERRY_RUNTIME_DIR", domain.runtime_dir().c_str(), 1);
}

void exec_in_domain(const TestDomain& domain, const std::vector<std::string>& argv) {
  use_domain_env(domain);
  exec_argv(argv);
}

namespace {

// The end of a log, for a failure message.
std::string tail(const std::string& text, std::size_t bytes = 6000) {
  return text.size() <= bytes ? text : "...\n" + text.substr(text.size() - bytes);
}

std::string next_log_path(const TestDomain& domain) {
  static std::atomic<unsigned> counter{0};
  return (domain.runtime_dir() /
          ("ferryd-" + std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + ".log"))
      .string();
}

void read_all(int fd, std::string& into) {
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) into.append(buf, static_cast<std::size_t>(n));
}

}  // namespace

RunResult run_program(const TestDomain& domain, const std::vector<std::string>& argv,
                      std::chrono::milliseconds timeout) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    exec_in_domain(domain, argv);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  RunResult result;
  // Drain both pipes while the program runs, so that it never blocks on a full pipe.
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int open_fds = 2;
  while (open_fds > 0 && std::chrono::steady_clock::now() < deadline) {
    if (::poll(fds, 2, 50) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  result.exit_code = wait_exit(pid, std::max(left, std::chrono::milliseconds(10)));
  for (auto& f : fds) {
    if (f.fd >= 0) {
      read_all(f.fd, &f == &fds[0] ? result.out : result.err);
      ::close(f.fd);
    }
  }
  if (const auto report = sanitizer_report(result.err)) {
    FAIL_CHECK(argv.front() << " (exit code " << result.exit_code
                            << ") printed a sanitizer report:\n"
                            << *report);
  }
  return result;
}

Daemon::Daemon(const TestDomain& domain, const std::string& yaml) : Daemon(domain, yaml, {}) {}

Daemon::Daemon(const TestDomain& domain, const std::string& yaml,
               std::vector<std::string> extra_args)
    : domain_(domain),
      config_path_((domain.runtime_dir() / "ferry.yaml").string()),
      extra_args_(std::move(extra_args)),
      log_path_(next_log_path(domain)) {
  std::ofstream(config_path_) << yaml;
  start();
}

Daemon::Daemon(const TestDomain& domain, const std::string& yaml,
               std::vector<std::string> extra_args, RunAs user)
    : domain_(domain),
      config_path_((domain.runtime_dir() / "ferry.yaml").string()),
      extra_args_(std::move(extra_args)),
      log_path_(next_log_path(domain)),
      user_(user) {
  std::ofstream(config_path_) << yaml;
  start();
}

Daemon::~Daemon() {
  const int code = pid_ > 0 ? stop() : 0;
  const std::string text = log();
  // ctest shows it when the test fails, as when ferryd wrote to our stderr.
  if (!text.empty())
    std::fprintf(stderr, "--- ferryd's log (%s):\n%s", log_path_.c_str(), tail(text).c_str());
  if (code != 0) {
    FAIL_CHECK("ferryd of domain '" << domain_.name() << "' exited with code " << code
                                    << " on SIGTERM (0 expected)");
  }
  if (const auto report = sanitizer_report(text)) {
    FAIL_CHECK("ferryd of domain '" << domain_.name() << "' printed a sanitizer report:\n"
                                    << *report);
  }
}

std::string Daemon::log() const { return read_file(log_path_); }

void Daemon::start() {
  std::fflush(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    if (user_ &&
        (::setgroups(0, nullptr) != 0 || ::setgid(user_->gid) != 0 || ::setuid(user_->uid) != 0)) {
      std::fprintf(stderr, "cannot become uid %u to run ferryd\n", user_->uid);
      std::_Exit(126);
    }
    std::vector<std::string> argv{bin_path("ferryd"), "--config",     config_path_,
                                  "--domain",         domain_.name(), "--foreground"};
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    exec_in_domain(domain_, argv);
  }
  const std::string sock = (domain_.runtime_dir() / (domain_.name() + ".sock")).string();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ferry::discovery::UnixSeqpacketSocket::connect(sock, std::chrono::milliseconds(0))) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("ferryd exited before it listened on " + sock + "; its log:\n" +
                               tail(log()));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill9();
      throw std::runtime_error("ferryd did not listen on " + sock + " within 10 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int Daemon::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const int code = wait_exit(pid_, std::chrono::seconds(5));
  pid_ = -1;
  return code;
}

void Daemon::kill9() {
  kill_and_reap(pid_);
  pid_ = -1;
}

}  // namespace ferry::test
