// ferryd: the discovery daemon of one ferry domain.
//   ferryd --config FILE [--domain NAME] [--foreground] [--log-level LEVEL] [--group G]
// Exit codes: 0 stopped cleanly (detached: the domain is served), 1 runtime
// failure, 2 usage or configuration error.
//
// Without --foreground it detaches before it makes anything bound to its
// process (the socket and its lock, the signal mask, the signalfd and the
// epoll loop): the child starts a session of its own and writes its log to
// <runtime_dir>/<domain>.log, while the parent waits in the user's terminal
// for the child's start-up report on a pipe and exits with its code: 0 once
// the socket listens, else the child's error, printed.
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>

#include "client_access.hpp"
#include "daemon_io.hpp"
#include "ferry/config/error.hpp"
#include "ferry/config/load.hpp"
#include "ferry/discovery/paths.hpp"
#include "ferry/discovery/pid_file.hpp"
#include "ferry/transport/domain_lock.hpp"
#include "ferry/transport/names.hpp"
#include "service_notifier.hpp"

namespace {

struct Args {
  std::string config;
  std::optional<std::string> domain;
  bool foreground = false;
  std::string log_level;
  std::optional<std::string> group;
};

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "ferryd: %s\n", message.c_str());
  return code;
}

// Where start-up succeeds or fails: in the foreground, on stderr; detached,
// in a report on the pipe to the parent waiting in the user's terminal
// ("<code>\n<message>"), which prints the message and exits with the code.
class Startup {
 public:
  // -1: in the foreground.
  explicit Startup(int report_fd) noexcept : fd_(report_fd) {}
  ~Startup() {
    if (fd_ >= 0) ::close(fd_);
  }
  Startup(const Startup&) = delete;
  Startup& operator=(const Startup&) = delete;

  // Reports a failure; returns `code`, for main to exit with.
  int fail(int code, const std::string& message) {
    if (fd_ < 0) return ::fail(code, message);
    spdlog::error("{}", message);  // the log keeps it too
    report(code, message);
    return code;
  }

  // The domain is served: the waiting parent exits 0.
  void ready() {
    if (fd_ >= 0) report(0, {});
  }

 private:
  void report(int code, const std::string& message) {
    const std::string text = fmt::format("{}\n{}", code, message);
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the parent is gone: nobody to tell
      done += static_cast<std::size_t>(n);
    }
    ::close(fd_);
    fd_ = -1;
  }

  int fd_ = -1;
};

// The parent's side of detaching: waits for the child's report and exits
// with its code. A child that died before reporting is an error naming how.
[[noreturn]] void await_report(int fd, pid_t child, const std::string& log_path) {
  std::string report;
  char buffer[1024];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report.append(buffer, static_cast<std::size_t>(n));
  }
  const auto newline = report.find('\n');
  int code = -1;
  if (newline != std::string::npos) {
    const auto [end, ec] = std::from_chars(report.data(), report.data() + newline, code);
    if (ec != std::errc{} || end != report.data() + newline) code = -1;
  }
  if (code < 0) {
    int status = 0;
    std::string how = "ended";
    if (::waitpid(child, &status, 0) == child) {
      if (WIFSIGNALED(status)) {
        how = fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                          ::strsignal(WTERMSIG(status)));
      } else if (WIFEXITED(status)) {
        how = fmt::format("exited with code {}", WEXITSTATUS(status));
      }
    }
    std::_Exit(fail(1, fmt::format("the detached daemon {} before it served the domain; see {}",
                                   how, log_path)));
  }
  if (code != 0) {
    fail(code, report.substr(newline + 1));
    ::waitpid(child, nullptr, 0);  // it exits right after its report: leave nothing running
  }
  std::_Exit(code);
}

// Forks. The parent does not return: it waits for the child's report (see
// await_report). The child starts a session of its own and gets the pipe's
// write end; -1 when the fork could not be made (the error is printed).
int detach(const std::string& log_path) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return fail(-1, fmt::format("cannot detach: pipe: {}", std::strerror(errno)));
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    fail(-1, fmt::format("cannot detach: fork: {}", std::strerror(errno)));
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return -1;
  }
  if (pid > 0) {
    ::close(pipe_fds[1]);
    await_report(pipe_fds[0], pid, log_path);
  }
  ::close(pipe_fds[0]);
  ::setsid();  // no controlling terminal: a hang-up or Ctrl-C there is not ours
  return pipe_fds[1];
}

// The detached daemon reads /dev/null and writes stdout and stderr (hence
// its log: the logger writes to stderr, flushing each message, and so does
// anything else that reports there) to `log_path`.
std::expected<void, std::string> redirect_stdio(const std::string& log_path) {
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0)
    return std::unexpected(
        fmt::format("cannot open the log file {}: {}", log_path, std::strerror(errno)));
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, STDIN_FILENO);
    ::close(null);
  }
  ::dup2(log, STDOUT_FILENO);
  ::dup2(log, STDERR_FILENO);
  ::close(log);
  return {};
}

// The pid file of the process that wrote it, removed when it is destroyed
// (when ferryd stops cleanly) if it still holds our pid.
class PidFile {
 public:
  explicit PidFile(std::filesystem::path path) : path_(std::move(path)) {}
  ~PidFile() {
    if (written_) ferry::discovery::remove_pid_file(path_, ::getpid());
  }
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

  std::expected<void, std::string> write() {
    auto written = ferry::discovery::write_pid_file(path_, ::getpid());
    written_ = written.has_value();
    return written;
  }

 private:
  std::filesystem::path path_;
  bool written_ = false;
};

struct Setup {
  std::string domain;
  std::filesystem::path runtime_dir;
  std::filesystem::path socket_path;
  std::optional<ferry::discovery::AdmittedGroup> group;
  ferry::config::Config config;
  std::string config_text;
};

// Everything that binds the domain to this process: the socket (and its
// lock), the pid file, the daemon's signalfd and loop. Runs in the process
// that serves (the detached child).
int serve(const Args& args, Setup& setup, Startup& startup) {
  namespace discovery = ferry::discovery;
  // The socket is reachable (and the pid file read) before the daemon's loop
  // runs: a SIGTERM sent meanwhile waits for its signalfd.
  discovery::block_stop_signals();
  // The domain's lock in /dev/shm first: a ferryd given another runtime
  // directory has another socket, but the same shared-memory names.
  const mode_t object_mode = setup.group ? 0660 : 0600;
  auto domain_lock = ferry::transport::DomainLock::acquire(
      setup.domain, object_mode, setup.group ? setup.group->gid : static_cast<gid_t>(-1));
  if (!domain_lock && domain_lock.error().held) {
    const auto holder = domain_lock.error().holder;
    return startup.fail(
        1, fmt::format("another ferryd is serving domain '{}'{}: it holds the domain's lock "
                       "/dev/shm/{} (whatever runtime directory it was given)",
                       setup.domain, holder ? fmt::format(" (pid {})", *holder) : std::string{},
                       ferry::transport::domain_lock_name(setup.domain)));
  }
  if (!domain_lock) return startup.fail(1, domain_lock.error().message);
  // A start that fails from here on leaves no lock behind: it goes unless
  // the domain has other objects (a previous daemon's, kept for its live
  // nodes: the next ferryd adopts them), as when a daemon stops.
  const auto fail = [&](int code, const std::string& message) {
    const std::string lock = ferry::transport::domain_lock_name(setup.domain);
    const auto objects = ferry::transport::list_domain_objects(setup.domain);
    if (std::all_of(objects.begin(), objects.end(), [&](const auto& o) { return o == lock; })) {
      domain_lock->remove();
    }
    return startup.fail(code, message);
  };
  // The group's members may connect from the moment the socket listens.
  auto listener = discovery::UnixSeqpacketSocket::listen(
      setup.socket_path, setup.group ? std::optional<gid_t>(setup.group->gid) : std::nullopt);
  if (!listener) return fail(1, listener.error().message);
  // We hold the domain's lock: a pid file already there is a dead daemon's.
  PidFile pid_file(discovery::pid_file_path(setup.domain, setup.runtime_dir));
  if (auto written = pid_file.write(); !written) return fail(1, written.error());

  try {
    discovery::DaemonOptions options{setup.domain, setup.socket_path.string(),
                                     object_mode,  setup.group,
                                     args.config,  std::move(setup.config_text)};
    // No live daemon holds the domain (listen() would have refused): what is
    // left in /dev/shm under its prefix belongs to a dead one.
    discovery::DaemonIo daemon(options, setup.config, std::move(*listener));
    if (auto started = daemon.start(); !started) return fail(1, started.error());
    startup.ready();
    const int code = daemon.run();
    // No node is left: the domain is gone, its lock goes last.
    if (daemon.domain_removed()) domain_lock->remove();
    return code;
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"ferryd: the discovery daemon of a ferry domain"};
  app.add_option("--config", args.config, "Topic configuration (YAML)")->required();
  app.add_option("--domain", args.domain,
                 "Domain to serve (else FERRY_DOMAIN, the config's domain:, 'default')");
  app.add_flag("--foreground", args.foreground,
               "Stay in the foreground and log to stderr (else detach once the domain is served, "
               "log to <runtime_dir>/<domain>.log)");
  app.add_option("--log-level", args.log_level,
                 "trace, debug, info, warn, error (else FERRY_LOG, else info)");
  app.add_option("--group", args.group,
                 "Let this group's members use the domain (group name or gid; objects 0660)");
  app.set_version_flag("--version", "ferryd 0.1.0");
  app.footer(
      "Writes its pid to <runtime_dir>/<domain>.pid while it serves and holds the domain's lock\n"
      "/dev/shm/ferry.<domain>.lock. SIGTERM or SIGINT stops it: it removes its socket and pid\n"
      "file, and the domain's shared-memory objects unless nodes still live (they keep the\n"
      "domain; the next ferryd adopts it).\n"
      "Examples:\n"
      "  ferryd --config topics.yaml                 # detaches once the domain is served\n"
      "  ferryd --config topics.yaml --domain demo --foreground --log-level debug\n"
      "  kill $(cat \"$XDG_RUNTIME_DIR/ferry/demo.pid\")  # stops it");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::string level = args.log_level;
  if (level.empty() && std::getenv("FERRY_LOG") != nullptr) level = std::getenv("FERRY_LOG");
  if (level.empty()) level = "info";
  const auto parsed_level = spdlog::level::from_str(level);
  if (parsed_level == spdlog::level::off && level != "off") {
    return fail(
        2, fmt::format("unknown log level '{}'; expected trace, debug, info, warn, error or off",
                       level));
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("ferryd"));
  spdlog::set_level(parsed_level);

  // What can be checked without holding the domain is checked here, before
  // detaching, so that its errors need no report through the pipe.
  Setup setup;
  // The text is kept to be served to tools (GetConfig): they decode samples
  // with the schema this daemon actually loaded.
  try {
    // A regular file within the size limit; a FIFO or device is refused
    // without waiting on it. The error names the file and why.
    auto text = ferry::config::read_config_text(args.config);
    if (!text) return fail(2, text.error().to_string());
    setup.config = ferry::config::load_string(*text, args.config);
    // With `include:`, the included types written in: clients read this
    // text alone.
    setup.config_text = ferry::config::self_contained_text(setup.config, *text);
  } catch (const ferry::config::ConfigError& e) {
    return fail(2, e.what());
  }

  auto domain = ferry::discovery::resolve_domain(args.domain, setup.config.domain);
  if (!domain) return fail(2, domain.error().message);
  setup.domain = *domain;

  if (args.group) {
    auto group = ferry::discovery::find_group(*args.group);
    if (!group) return fail(2, group.error());
    setup.group = std::move(*group);
  }

  auto dir = ferry::discovery::ensure_runtime_dir();
  if (!dir) return fail(1, dir.error().message);
  setup.runtime_dir = *dir;
  if (setup.group) {
    // The group's members must reach the socket: the directory becomes
    // theirs to enter and list (0750), never to write.
    if (::chown(dir->c_str(), static_cast<uid_t>(-1), setup.group->gid) != 0 ||
        ::chmod(dir->c_str(), 0750) != 0) {
      return fail(1, fmt::format("cannot open the runtime directory {} to group '{}': {}",
                                 dir->string(), setup.group->name, std::strerror(errno)));
    }
  }
  auto sock_path = ferry::discovery::socket_path(setup.domain, setup.runtime_dir);
  if (!sock_path) return fail(1, sock_path.error().message);
  setup.socket_path = *sock_path;

  const std::string log_path = (setup.runtime_dir / (setup.domain + ".log")).string();
  const int report_fd = args.foreground ? -1 : detach(log_path);  // the parent stays in detach()
  if (!args.foreground && report_fd < 0) return 1;
  Startup startup{report_fd};
  if (!args.foreground) {
    if (auto redirected = redirect_stdio(log_path); !redirected)
      return startup.fail(1, redirected.error());
    // The colour sink decided at its birth that stderr was a terminal: the
    // log file gets a plain one.
    spdlog::drop("ferryd");
    spdlog::set_default_logger(spdlog::stderr_logger_mt("ferryd"));
    spdlog::set_level(parsed_level);
  }
  if (std::getenv("NOTIFY_SOCKET") != nullptr && !ferry::discovery::ServiceNotifier::available()) {
    spdlog::warn(
        "NOTIFY_SOCKET is set but this ferryd was built without libsystemd: no readiness "
        "or watchdog notifications (use Type=simple, or rebuild with libsystemd-dev)");
  }
  return serve(args, setup, startup);
}
