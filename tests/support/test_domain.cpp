#include "test_domain.hpp"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <thread>

#include "ferry/transport/names.hpp"
#include "process.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace ferry::test {

namespace {
// Threads of this process now (/proc/self/task).
[[maybe_unused]] std::size_t thread_count() {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

[[maybe_unused]] bool unshared_pid_namespace() {
  std::error_code ec;
  const auto own = std::filesystem::read_symlink("/proc/self/ns/pid", ec);
  const auto children = std::filesystem::read_symlink("/proc/self/ns/pid_for_children", ec);
  return !ec && own != children;
}

std::string unique_domain_name() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  const unsigned n = counter.fetch_add(1, std::memory_order_relaxed);
  return std::string(kTestDomainPrefix) + std::to_string(::getpid()) + "-" + std::to_string(n) +
         "-" + std::to_string(rd() % 100000);
}
}  // namespace

TestDomain::TestDomain() : name_(unique_domain_name()) {
  runtime_dir_ = std::filesystem::temp_directory_path() / ("ferry-test-" + name_);
  std::filesystem::create_directories(runtime_dir_);
  std::filesystem::permissions(runtime_dir_, std::filesystem::perms::owner_all);
}

TestDomain::~TestDomain() {
  transport::remove_domain_objects(name_);
  std::error_code ec;
  std::filesystem::remove_all(runtime_dir_, ec);
}

Child::Child(const std::function<int()>& body) {
  // Unflushed output would otherwise be printed twice, by us and the child.
  std::fflush(nullptr);
  // Forked from a process with other threads, the child holds what they
  // referenced but not their stacks: LeakSanitizer would call it leaked.
  [[maybe_unused]] const bool single_threaded = thread_count() == 1;
  pid_ = ::fork();
  if (pid_ == 0) {
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: uncaught exception: %s\n", ::getpid(), e.what());
      code = 99;
    } catch (...) {
      std::fprintf(stderr, "child %d: uncaught exception\n", ::getpid());
      code = 99;
    }
#if defined(__SANITIZE_ADDRESS__)
    // LeakSanitizer checks at exit(), which _Exit skips: check here. What
    // the body leaked fails the child (98) like any other failure. Not in a
    // child of a threaded test (see above), nor in one that made a pid
    // namespace for its children (unshare): there LeakSanitizer cannot start
    // the thread that stops the world.
    if (single_threaded && !unshared_pid_namespace() && __lsan_do_recoverable_leak_check() != 0 &&
        code == 0) {
      code = 98;
    }
#endif
    std::_Exit(code);  // skip the parent's atexit handlers and doctest state
  }
}

Child::Child(Child&& other) noexcept : pid_(other.pid_), signalled_(other.signalled_) {
  other.pid_ = -1;
}

Child::~Child() {
  if (pid_ <= 0) return;
  int status = 0;
  // A child that ended by itself while the test never asked how is checked
  // here: a failure (or a sanitizer's exit code) must not pass unseen.
  if (!signalled_ && ::waitpid(pid_, &status, WNOHANG) == pid_) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      FAIL_CHECK("child " << pid_ << " ended with "
                          << (WIFEXITED(status) ? "exit code " : "signal ")
                          << (WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status))
                          << " and the test did not wait for it");
    }
    return;
  }
  kill_and_reap(pid_);
}

void Child::kill(int signal) {
  if (pid_ > 0) {
    signalled_ = true;
    ::kill(pid_, signal);
  }
}

int Child::wait(std::chrono::milliseconds timeout) {
  const int code = wait_exit(pid_, timeout);
  pid_ = -1;
  return code;
}

}  // namespace ferry::test
