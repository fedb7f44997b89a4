#pragma once
// Test helpers: a fresh domain (and runtime directory) per test, removed with
// all its shared-memory objects when the test ends, even when it fails; and
// child processes that are always reaped.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace ferry::test {

// Every test domain starts with this prefix, so that the suite's final
// clean-up step can remove what a crashed test left behind.
inline constexpr const char* kTestDomainPrefix = "ft";

class TestDomain {
 public:
  TestDomain();
  ~TestDomain();
  TestDomain(const TestDomain&) = delete;
  TestDomain& operator=(const TestDomain&) = delete;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::filesystem::path& runtime_dir() const noexcept { return runtime_dir_; }

 private:
  std::string name_;
  std::filesystem::path runtime_dir_;
};

// A forked child running `body`; its return value is the exit status
// (under ASan, a leak the body left fails it too). The destructor kills
// (SIGKILL) and reaps a child that is still running, and fails the running
// test when the child had already ended badly unseen (not waited for, not
// signalled by the test).
class Child {
 public:
  explicit Child(const std::function<int()>& body);
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  // Waits for the child to exit; returns its exit code, 128+signal when it
  // was killed, or -1 when it did not finish within `timeout` (it is then
  // killed).
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  void kill(int signal);

 private:
  pid_t pid_ = -1;
  bool signalled_ = false;  // the test sent it a signal: its end is the test's doing
};

}  // namespace ferry::test
