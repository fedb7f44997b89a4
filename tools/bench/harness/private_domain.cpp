#include "harness/private_domain.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/discovery/socket.hpp"
#include "ferry/transport/names.hpp"
#include "harness/processes.hpp"

namespace ferry::bench {

namespace {

std::filesystem::path temp_base() {
  const char* t = std::getenv("TMPDIR");
  std::filesystem::path base = t != nullptr && *t != '\0' ? t : "/tmp";
  // The daemon's socket path must fit sockaddr_un (108 bytes).
  if (base.string().size() > 60) base = "/tmp";
  return base;
}

// What an earlier `ferry bench` killed by SIGKILL left (its ferryd and
// sides die with it, its directory cannot): directories
// "ferry-bench-<pid>-*" of ours whose pid is gone, and that domain's
// objects.
void remove_stale(const std::filesystem::path& base) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ferry-bench-", 0) != 0) continue;
    const std::string rest = name.substr(12);
    const std::size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end != rest.c_str() + dash || pid <= 0) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0 || st.st_uid != ::getuid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
      continue;  // alive (or not ours to judge)
    (void)transport::remove_domain_objects(fmt::format("bench{}", pid));
    std::filesystem::remove_all(e.path(), ec);
  }
}

}  // namespace

std::filesystem::path sibling_program(const std::string& name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program's directory (/proc/self/exe)");
  return self.parent_path() / name;
}

PrivateDomain::PrivateDomain() : name_(fmt::format("bench{}", ::getpid())) {
  const std::filesystem::path base = temp_base();
  remove_stale(base);
  std::string pattern = (base / fmt::format("ferry-bench-{}-XXXXXX", ::getpid())).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(fmt::format("cannot create a private runtime directory {}: {}",
                                         pattern, std::strerror(errno)));
  }
  dir_ = pattern;  // mkdtemp makes it 0700
  // A crashed earlier run with our pid may have left objects: they are ours to remove.
  (void)transport::remove_domain_objects(name_);
}

PrivateDomain::~PrivateDomain() {
  if (daemon_ > 0) (void)stop_child(daemon_, std::chrono::seconds(5));
  // ferryd removes its objects when it stops; whatever is left (a killed
  // ferryd, the raw-ring segments of an interrupted run) goes now.
  (void)transport::remove_domain_objects(name_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void PrivateDomain::enter() const noexcept {
  ::setenv("FERRY_DOMAIN", name_.c_str(), 1);
  ::setenv("FERRY_RUNTIME_DIR", dir_.c_str(), 1);
}

std::string PrivateDomain::daemon_log() const {
  std::ifstream in(dir_ / "ferryd.log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void PrivateDomain::start_daemon(const std::string& yaml) {
  const auto config = dir_ / "bench.yaml";
  {
    std::ofstream out(config);
    out << yaml;
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", config.string()));
  }
  const auto ferryd = sibling_program("ferryd");
  if (::access(ferryd.c_str(), X_OK) != 0) {
    throw std::runtime_error(fmt::format(
        "cannot run {}: ferry bench starts the ferryd built next to ferry", ferryd.string()));
  }
  const int log =
      ::open((dir_ / "ferryd.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log < 0)
    throw std::runtime_error(fmt::format("cannot create {}", (dir_ / "ferryd.log").string()));
  const std::vector<std::string> argv{ferryd.string(), "--config",     config.string(), "--domain",
                                      name_,           "--foreground", "--log-level",   "warn"};
  const std::vector<std::string> env{"FERRY_RUNTIME_DIR=" + dir_.string(), "FERRY_DOMAIN=" + name_};
  try {
    daemon_ = spawn_program(argv, log, env, SIGTERM);
  } catch (...) {
    ::close(log);
    throw;
  }
  ::close(log);

  const std::string sock = (dir_ / (name_ + ".sock")).string();
  const std::int64_t deadline = now_ns() + 10'000'000'000;
  while (!ferry::discovery::UnixSeqpacketSocket::connect(sock, std::chrono::milliseconds(0))) {
    int code = -1;
    if (!child_running(daemon_, &code)) {
      daemon_ = -1;
      throw std::runtime_error(
          fmt::format("the benchmark's ferryd exited with code {}: {}", code, daemon_log()));
    }
    if (now_ns() > deadline) {
      throw std::runtime_error(fmt::format(
          "the benchmark's ferryd did not listen on {} within 10 s: {}", sock, daemon_log()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void PrivateDomain::check_daemon() {
  if (daemon_ <= 0) return;
  int code = -1;
  if (!child_running(daemon_, &code)) {
    daemon_ = -1;
    throw std::runtime_error(
        fmt::format("the benchmark's ferryd exited with code {}: {}", code, daemon_log()));
  }
}

}  // namespace ferry::bench
