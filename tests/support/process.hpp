#pragma once
// Child processes of a test: running a program in a forked child, waiting
// for one with a deadline, and killing one; always reaped.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "temp_files.hpp"  // read_file

namespace ferry::test {

// Waits up to `timeout` for `pid` to end and reaps it. Returns its exit
// code, 128+signal when a signal ended it, or -1 when it still ran at the
// deadline (it is then killed with SIGKILL and reaped).
int wait_exit(pid_t pid, std::chrono::milliseconds timeout);

// Kills `pid` with SIGKILL and reaps it; nothing for pid <= 0.
void kill_and_reap(pid_t pid);

// In a forked child: replaces it with `argv` (searched in PATH when the
// program has no slash), or exits 127 when that fails.
[[noreturn]] void exec_argv(const std::vector<std::string>& argv);

// The first sanitizer report in a program's output (AddressSanitizer,
// LeakSanitizer, UndefinedBehaviorSanitizer's "runtime error:",
// ThreadSanitizer), with the lines that follow it; nullopt when it has none.
// A sanitizer in a program the test started (ferryd, ferry, a child) writes
// to that program's stderr and may not change its exit code (UBSan's
// "runtime error:" without halt_on_error, a TSan warning): the test must
// read it there.
std::optional<std::string> sanitizer_report(std::string_view output);

// The CPU time (user + system) process `pid` has used so far, in seconds,
// from /proc/PID/stat; -1 when it cannot be read.
double cpu_seconds(pid_t pid);

}  // namespace ferry::test
