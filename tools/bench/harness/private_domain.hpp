#pragma once
// A private ferry domain for one benchmark: its own runtime directory (a
// fresh 0700 temporary directory "$TMPDIR/ferry-bench-<pid>-XXXXXX"), its
// own name ("bench<pid>"), and, when
// ferry is measured, its own ferryd (the one built next to this program)
// serving a configuration written for the run. Everything is undone by the
// destructor, also on an exception or an interrupt: ferryd stopped by its
// pid (SIGTERM, then SIGKILL), the domain's shared-memory objects removed,
// the directory deleted. ferryd gets SIGTERM if we die first (and removes
// the domain's objects); the directory of a `ferry bench` killed by SIGKILL
// is removed by the next one.

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace ferry::bench {

class PrivateDomain {
 public:
  // Throws std::runtime_error when the directory cannot be made.
  PrivateDomain();
  ~PrivateDomain();
  PrivateDomain(const PrivateDomain&) = delete;
  PrivateDomain& operator=(const PrivateDomain&) = delete;

  // Writes `yaml`, starts ferryd and waits until its socket accepts.
  // Throws std::runtime_error with ferryd's own words when it does not start.
  void start_daemon(const std::string& yaml);
  // Throws when the daemon started by start_daemon has exited.
  void check_daemon();

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::filesystem::path& runtime_dir() const noexcept { return dir_; }
  [[nodiscard]] pid_t daemon_pid() const noexcept { return daemon_; }

  // In a side (after fork): points FERRY_DOMAIN and FERRY_RUNTIME_DIR here.
  void enter() const noexcept;

 private:
  [[nodiscard]] std::string daemon_log() const;
  std::string name_;
  std::filesystem::path dir_;
  pid_t daemon_ = -1;
};

// The ferryd next to the running program (/proc/self/exe's directory).
[[nodiscard]] std::filesystem::path sibling_program(const std::string& name);

}  // namespace ferry::bench
