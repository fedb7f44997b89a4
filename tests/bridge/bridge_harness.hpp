#pragma once
// Two "machines" on one host for the bridge tests: two network namespaces
// joined by a veth pair when the test runs as root (CI does), else the host's
// own loopback; and programs started in them in the background.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eventually.hpp"
#include "test_domain.hpp"

namespace ferry::test {

// A DDS domain id this test process holds alone until destroyed: an abstract
// Unix socket named after the id, bound exclusively (the kernel frees it when
// the process dies, and it leaves no file behind). The ids are those whose
// fixed Cyclone ports (7400 + 250 * id, and + 1) lie outside Linux's
// ephemeral range (32768-60999): with its default ParticipantIndex "none",
// Cyclone binds its unicast sockets to ephemeral ports, and one of them can
// take the domain's multicast data port before Cyclone binds that ("failed to
// bind to ANY:44401: address in use", domain 148).
class DdsDomainClaim {
 public:
  DdsDomainClaim();
  ~DdsDomainClaim();
  DdsDomainClaim(const DdsDomainClaim&) = delete;
  DdsDomainClaim& operator=(const DdsDomainClaim&) = delete;

  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }

 private:
  std::uint32_t id_ = 0;
  int socket_ = -1;
};

// Namespaces named "fbr<pid>-<n>{a,b}", deleted by the destructor (even when
// the test fails); deleting a namespace deletes its end of the veth pair and
// with it the other end. cleanup_test_domains.sh removes those of dead test
// processes.
class NetPair {
 public:
  NetPair();
  ~NetPair();
  NetPair(const NetPair&) = delete;
  NetPair& operator=(const NetPair&) = delete;

  // True: two namespaces over a veth pair; false: the host's loopback.
  [[nodiscard]] bool isolated() const noexcept { return !ns_[0].empty(); }
  // `argv` run inside machine `side` (0 or 1).
  [[nodiscard]] std::vector<std::string> on(int side, std::vector<std::string> argv) const;
  // A DDS domain id no other test process uses at the same time.
  [[nodiscard]] std::uint32_t dds_domain() const noexcept { return dds_domain_.id(); }

 private:
  std::string ns_[2];
  DdsDomainClaim dds_domain_;
};

// A program running in the background with a test domain's environment
// (FERRY_DOMAIN, FERRY_RUNTIME_DIR) and `env` added, stdout and stderr to
// files. The destructor kills (SIGKILL) and reaps it if it still runs; it
// also dies with the test process.
class Background {
 public:
  Background(const TestDomain& domain, std::vector<std::string> argv,
             std::vector<std::pair<std::string, std::string>> env = {});
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] std::string out() const;
  [[nodiscard]] std::string err() const;
  // Waits until `text` appears in stdout or stderr; false after `timeout`.
  bool wait_for(const std::string& text, std::chrono::milliseconds timeout) const;
  // SIGINT (Ctrl-C), then waits; the exit code, 128+signal, or -1 (then killed).
  int interrupt(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Waits for it to end by itself (killed after `timeout`: -1).
  int wait(std::chrono::milliseconds timeout);
  void kill9();

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
};

}  // namespace ferry::test
