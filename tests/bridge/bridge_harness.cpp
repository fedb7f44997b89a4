#include "bridge_harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "daemon_fixture.hpp"
#include "process.hpp"
#include "skip.hpp"
#include "temp_files.hpp"

namespace ferry::test {

namespace {

std::atomic<int> g_counter{0};  // SYNC: relaxed; only makes names unique

// Runs a command to completion, quietly; true when it succeeded.
bool sh(const std::vector<std::string>& argv) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ferry::test::exec_argv(argv);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The ids whose fixed ports are outside the ephemeral range (see the class).
constexpr std::uint32_t kLowIds = 101;                      // 1..101: ports up to 32651
constexpr std::uint32_t kHighFirst = 215, kHighLast = 232;  // ports 61150..65401
constexpr std::uint32_t kIds = kLowIds + (kHighLast - kHighFirst + 1);

std::uint32_t nth_id(std::uint32_t n) { return n < kLowIds ? 1 + n : kHighFirst + (n - kLowIds); }

}  // namespace

DdsDomainClaim::DdsDomainClaim() {
  // Start where this process's pid points, so that concurrent tests rarely
  // probe the same ids.
  const auto start = static_cast<std::uint32_t>(::getpid()) % kIds;
  for (std::uint32_t k = 0; k < kIds; ++k) {
    const std::uint32_t id = nth_id((start + k) % kIds);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("cannot create a Unix socket to claim a DDS domain id");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string name = "ferry-test-dds-domain-" + std::to_string(id);
    std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) {
      id_ = id;
      socket_ = fd;
      return;
    }
    ::close(fd);
  }
  throw std::runtime_error("all " + std::to_string(kIds) +
                           " test DDS domain ids are held by other test processes");
}

DdsDomainClaim::~DdsDomainClaim() {
  if (socket_ >= 0) ::close(socket_);
}

NetPair::NetPair() {
  const int n = g_counter.fetch_add(1, std::memory_order_relaxed);
  if (std::getenv("FERRY_TEST_NO_NETNS") != nullptr) return;  // asked for: the host's network
  if (::geteuid() != 0) {
    skip_test("network namespaces need root: the two bridges share the host's network");
    return;
  }
  const std::string base = "fbr" + std::to_string(::getpid()) + "-" + std::to_string(n);
  const std::string a = base + "a", b = base + "b";
  // Interface names are at most 15 characters.
  const std::string va = "fv" + std::to_string(::getpid() % 100000) + "x" + std::to_string(n) + "a";
  const std::string vb = va.substr(0, va.size() - 1) + "b";
  const std::string net =
      "10." + std::to_string(100 + n % 100) + "." + std::to_string(::getpid() % 250) + ".";
  if (!sh({"ip", "netns", "add", a})) {
    skip_test("ip netns add failed: the two bridges share the host's network");
    return;
  }
  ns_[0] = a;
  if (!sh({"ip", "netns", "add", b})) {
    sh({"ip", "netns", "del", a});
    ns_[0].clear();
    skip_test("ip netns add failed: the two bridges share the host's network");
    return;
  }
  ns_[1] = b;
  const bool ok = sh({"ip", "link", "add", va, "type", "veth", "peer", "name", vb}) &&
                  sh({"ip", "link", "set", va, "netns", a}) &&
                  sh({"ip", "link", "set", vb, "netns", b}) &&
                  sh({"ip", "-n", a, "addr", "add", net + "1/24", "dev", va}) &&
                  sh({"ip", "-n", b, "addr", "add", net + "2/24", "dev", vb}) &&
                  sh({"ip", "-n", a, "link", "set", va, "up"}) &&
                  sh({"ip", "-n", b, "link", "set", vb, "up"}) &&
                  sh({"ip", "-n", a, "link", "set", "lo", "up"}) &&
                  sh({"ip", "-n", b, "link", "set", "lo", "up"});
  if (!ok)
    throw std::runtime_error("cannot set up the veth pair between namespaces " + a + " and " + b);
}

NetPair::~NetPair() {
  for (const auto& ns : ns_)
    if (!ns.empty()) sh({"ip", "netns", "del", ns});
}

std::vector<std::string> NetPair::on(int side, std::vector<std::string> argv) const {
  if (!isolated()) return argv;
  std::vector<std::string> out{"/usr/sbin/ip", "netns", "exec", ns_[side]};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Background::Background(const TestDomain& domain, std::vector<std::string> argv,
                       std::vector<std::pair<std::string, std::string>> env) {
  const std::string base =
      (domain.runtime_dir() /
       ("bg" + std::to_string(g_counter.fetch_add(1, std::memory_order_relaxed))))
          .string();
  out_path_ = base + ".out";
  err_path_ = base + ".err";
  std::fflush(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    // Killed with the test, even when the test itself is killed (a timeout).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    use_domain_env(domain);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    exec_argv(argv);
  }
}

Background::~Background() { kill_and_reap(pid_); }

std::string Background::out() const { return read_file(out_path_); }
std::string Background::err() const { return read_file(err_path_); }

bool Background::wait_for(const std::string& text, std::chrono::milliseconds timeout) const {
  return eventually(
      [&] {
        return out().find(text) != std::string::npos || err().find(text) != std::string::npos;
      },
      timeout);
}

int Background::interrupt(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGINT);
  return wait(timeout);
}

int Background::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  const int rc = wait_exit(pid_, timeout);
  pid_ = -1;
  return rc;
}

void Background::kill9() {
  kill_and_reap(pid_);
  pid_ = -1;
}

}  // namespace ferry::test
