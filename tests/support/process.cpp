#include "process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

namespace ferry::test {

int wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  if (pid <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_and_reap(pid);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

void kill_and_reap(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

void exec_argv(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::_Exit(127);
}

std::optional<std::string> sanitizer_report(std::string_view output) {
  static constexpr std::string_view kMarks[] = {
      "ERROR: AddressSanitizer",  "ERROR: LeakSanitizer",   "runtime error:",
      "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer", "ERROR: UndefinedBehaviorSanitizer"};
  std::size_t first = std::string_view::npos;
  for (const std::string_view mark : kMarks) first = std::min(first, output.find(mark));
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t line = output.rfind('\n', first);
  const std::size_t from = line == std::string_view::npos ? 0 : line + 1;
  return std::string(output.substr(from, 4000));
}

double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // the name may hold spaces and parentheses
  if (paren == std::string::npos) return -1;
  // Fields 3 on after the name; utime and stime are fields 14 and 15.
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i >= 14) ticks += std::stol(field);
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace ferry::test
