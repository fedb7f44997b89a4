// ferryd as an administrator runs it: detached (no --foreground) with its
// pid file, stopped by SIGTERM; `ferry clean` after a killed daemon; --group.
#include <doctest/doctest.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/discovery/pid_file.hpp"
#include "ferry/discovery/socket.hpp"
#include "ferry/transport/names.hpp"
#include "json_text.hpp"
#include "privileges.hpp"
#include "pubsub_util.hpp"
#include "temp_files.hpp"
#include "test_domain.hpp"

using namespace ferry::test;

namespace {

namespace fs = std::filesystem;

const std::string kTopics = "  - { name: t, type: Seq }\n";

fs::path socket_of(const TestDomain& domain) {
  return domain.runtime_dir() / (domain.name() + ".sock");
}
fs::path pid_file_of(const TestDomain& domain) {
  return domain.runtime_dir() / (domain.name() + ".pid");
}

// A detached ferryd leaves its parent (run_program's child): this test
// process takes in such orphans (a child subreaper), so that it can reap a
// stopped daemon instead of leaving a zombie to an init that may not reap.
bool process_gone(pid_t pid) {
  if (::waitpid(pid, nullptr, WNOHANG) == pid) return true;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // Not our child after all: a zombie counts as gone.
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

// Starts `ferryd --config FILE --domain D [extra...]` without --foreground
// and owns whatever daemon that leaves: the destructor SIGKILLs it (by the
// pid its pid file or socket names) so that a failing test leaves nothing
// running; the TestDomain then removes its objects.
class DetachedDaemon {
 public:
  DetachedDaemon(const TestDomain& domain, const std::string& config,
                 const std::vector<std::string>& extra = {})
      : domain_(domain) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // see process_gone
    std::vector<std::string> argv{bin_path("ferryd"), "--config", config, "--domain",
                                  domain.name()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    result_ = run_program(domain, argv, std::chrono::seconds(20));
    find_pid();
  }
  ~DetachedDaemon() {
    find_pid();  // it may have written its pid file after run_program gave up
    if (pid_ > 0 && !process_gone(pid_)) {
      ::kill(pid_, SIGKILL);
      (void)eventually([&] { return process_gone(pid_); }, std::chrono::seconds(5));  // best effort
    }
  }
  DetachedDaemon(const DetachedDaemon&) = delete;
  DetachedDaemon& operator=(const DetachedDaemon&) = delete;

  [[nodiscard]] const ferry::test::RunResult& result() const noexcept { return result_; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  // Only a start that succeeded (or timed out) may have left a daemon; a
  // refused one must not claim the pid of the daemon that refused it.
  void find_pid() {
    if (pid_ > 0 || (result_.exit_code != 0 && result_.exit_code != -1)) return;
    if (auto from_file = ferry::discovery::read_pid_file(pid_file_of(domain_))) {
      pid_ = *from_file;
      return;
    }
    // No pid file: the socket's listener, as the kernel saw it.
    auto probe = ferry::discovery::UnixSeqpacketSocket::connect(socket_of(domain_),
                                                                std::chrono::milliseconds(200));
    if (probe) {
      if (auto cred = probe->peer_credentials()) pid_ = cred->pid;
    }
  }

  const TestDomain& domain_;
  ferry::test::RunResult result_;
  pid_t pid_ = -1;
};

std::vector<std::string> objects_of(const TestDomain& domain) {
  return ferry::transport::list_domain_objects(domain.name());
}

// A node (a child process) with a publisher and a subscriber on "t", so
// that the domain has a ring and doorbells besides the pool; it runs until
// the returned Child is destroyed. Returns once the two are matched (all
// their objects made), which the child says on a pipe.
ferry::test::Child start_node(const TestDomain& domain) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  ferry::test::Child node([&] {
    ::close(ready[0]);
    ferry::test::use_domain_env(domain);
    ferry::Node n{"maker"};
    auto pub = n.publisher<Seq>("t");
    auto sub = n.subscriber<Seq>("t");
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    [[maybe_unused]] const ssize_t w = ::write(ready[1], "!", 1);
    ::pause();
    return 0;
  });
  ::close(ready[1]);
  pollfd p{ready[0], POLLIN, 0};
  const bool matched = ::poll(&p, 1, 10000) == 1 && (p.revents & POLLIN) != 0;
  ::close(ready[0]);
  REQUIRE(matched);
  return node;
}

}  // namespace

TEST_CASE("a detached ferryd serves once the command returns and stops on SIGTERM, removing all") {
  TestDomain domain;
  const auto config = write_file(domain, "ok.yaml", seq_config(kTopics));
  DetachedDaemon daemon(domain, config);
  REQUIRE(daemon.result().exit_code == 0);
  CHECK(daemon.result().err.empty());
  CHECK(fs::exists(socket_of(domain)));
  REQUIRE(daemon.pid() > 0);
  CHECK(daemon.pid() != ::getpid());

  // The pid file names the process that listens on the socket.
  auto probe =
      ferry::discovery::UnixSeqpacketSocket::connect(socket_of(domain), std::chrono::seconds(1));
  REQUIRE(probe.has_value());
  CHECK(probe->peer_credentials()->pid == daemon.pid());
  probe->close();

  CHECK(run_program(domain, {bin_path("ferry"), "topic", "list"}).exit_code == 0);
  std::optional<ferry::test::Child> node{start_node(domain)};
  // With no node left it removes all (a live one would keep the domain:
  // test_stop_with_nodes).
  node.reset();

  REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
  CHECK(eventually([&] { return process_gone(daemon.pid()); }, std::chrono::seconds(2)));
  CHECK_FALSE(fs::exists(socket_of(domain)));
  CHECK_FALSE(fs::exists(pid_file_of(domain)));
  CHECK(objects_of(domain).empty());
  const std::string log = read_file(domain.runtime_dir() / (domain.name() + ".log"));
  CHECK(log.find("signal 15 received") != std::string::npos);
  CHECK(log.find("ferryd stopped") != std::string::npos);
  // A detached daemon's stderr is its log: a sanitizer build reports there.
  CHECK(log.find("Sanitizer") == std::string::npos);
  CHECK(log.find("runtime error:") == std::string::npos);
}

TEST_CASE("a detached ferryd with a bad configuration prints file:line:col and exits 2") {
  TestDomain domain;
  const auto config = write_file(domain, "bad.yaml", "topics:\n  - { name: a, type: Nope }\n");
  DetachedDaemon daemon(domain, config);
  CHECK(daemon.result().exit_code == 2);
  CHECK(daemon.result().err.find(config + ":2:") != std::string::npos);
  CHECK(daemon.result().err.find("Nope") != std::string::npos);
  CHECK(daemon.pid() == -1);
  CHECK_FALSE(fs::exists(socket_of(domain)));
}

TEST_CASE(
    "a detached ferryd whose pool does not fit /dev/shm exits 1 naming the topic's file:line:col, "
    "and leaves no lock, socket or pid file behind") {
  TestDomain domain;
  // Sized from the topics: 1 GiB samples x 1024 slots x 64 subscribers, far
  // beyond any /dev/shm.
  const auto config = write_file(
      domain, "huge.yaml",
      "topics:\n  - { name: small, type: bytes, max_size: 1KiB }\n"
      "  - { name: huge, type: bytes, max_size: 1GiB, capacity: 1024, max_subscribers: 64 }\n");
  DetachedDaemon daemon(domain, config);
  CHECK(daemon.result().exit_code == 1);
  CAPTURE(daemon.result().err);
  CHECK(daemon.result().err.find(config + ":3:") != std::string::npos);
  CHECK(daemon.result().err.find("free; topic 'huge' needs the most") != std::string::npos);
  CHECK(daemon.pid() == -1);
  CHECK_FALSE(fs::exists(socket_of(domain)));
  CHECK_FALSE(fs::exists(pid_file_of(domain)));
  CHECK(objects_of(domain).empty());  // the domain's lock object too

  // And the next start with a configuration that fits serves at once.
  const auto ok = write_file(domain, "ok.yaml", seq_config(kTopics));
  DetachedDaemon next(domain, ok);
  CHECK(next.result().exit_code == 0);
}

TEST_CASE("a second detached ferryd on a served domain exits 1 saying so; the first goes on") {
  TestDomain domain;
  const auto config = write_file(domain, "ok.yaml", seq_config(kTopics));
  DetachedDaemon first(domain, config);
  REQUIRE(first.result().exit_code == 0);
  REQUIRE(first.pid() > 0);

  DetachedDaemon second(domain, config);
  CHECK(second.result().exit_code == 1);
  CHECK(second.result().err.find("ferryd: another ferryd is serving domain '" + domain.name() +
                                 "'") != std::string::npos);
  CHECK(second.pid() == -1);
  CHECK(ferry::discovery::read_pid_file(pid_file_of(domain)) == first.pid());
  CHECK(run_program(domain, {bin_path("ferry"), "topic", "list"}).exit_code == 0);
}

TEST_CASE("a foreground ferryd writes its pid file too and removes it when it stops") {
  TestDomain domain;
  Daemon daemon(domain, seq_config(kTopics));
  // The fixture returns once the socket accepts; the pid file follows it.
  CHECK(eventually(
      [&] { return ferry::discovery::read_pid_file(pid_file_of(domain)) == daemon.pid(); }));
  CHECK(daemon.stop() == 0);
  CHECK_FALSE(fs::exists(pid_file_of(domain)));
}

TEST_CASE("ferry clean removes what a killed ferryd left and then finds nothing to clean") {
  TestDomain domain;
  Daemon daemon(domain, seq_config(kTopics));
  std::optional<ferry::test::Child> node{start_node(domain)};
  const pid_t dead = daemon.pid();
  daemon.kill9();
  node.reset();
  const auto left = objects_of(domain);
  REQUIRE(left.size() >= 3);  // the pool, the ring, a doorbell
  REQUIRE(fs::exists(socket_of(domain)));
  REQUIRE(fs::exists(pid_file_of(domain)));

  const auto r = run_program(domain, {bin_path("ferry"), "clean"});
  CHECK(r.exit_code == 0);
  for (const auto& name : left)
    CHECK(r.out.find("removed /dev/shm/" + name + "\n") != std::string::npos);
  CHECK(r.out.find("removed " + socket_of(domain).string()) != std::string::npos);
  CHECK(r.out.find("(of ferryd pid " + std::to_string(dead) + ", no longer serving)") !=
        std::string::npos);
  CHECK(objects_of(domain).empty());
  CHECK_FALSE(fs::exists(socket_of(domain)));
  CHECK_FALSE(fs::exists(pid_file_of(domain)));

  const auto again =
      run_program(domain, {bin_path("ferry"), "--domain", domain.name(), "clean", "--json"});
  CHECK(again.exit_code == 0);
  const auto json = ferry::test::parse_json(again.out);
  CHECK(json["domain"] == domain.name());
  CHECK(json["objects"].empty());
  CHECK(json["socket"].is_null());
  CHECK(json["pid_file"].is_null());

  // The domain can be served again.
  daemon.start();
  CHECK(run_program(domain, {bin_path("ferry"), "topic", "list"}).exit_code == 0);
}

TEST_CASE("ferry clean refuses while a ferryd serves the domain and removes nothing") {
  TestDomain domain;
  Daemon daemon(domain, seq_config(kTopics));
  const auto node = start_node(domain);
  const auto before = objects_of(domain);
  REQUIRE(before.size() >= 3);

  const auto r = run_program(domain, {bin_path("ferry"), "clean"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ferry: ferryd (pid " + std::to_string(daemon.pid()) + ") is serving domain '" +
                   domain.name() + "' on " + socket_of(domain).string()) != std::string::npos);
  CHECK(r.out.empty());
  CHECK(objects_of(domain) == before);
  CHECK(fs::exists(socket_of(domain)));
  CHECK(fs::exists(pid_file_of(domain)));
  CHECK(run_program(domain, {bin_path("ferry"), "topic", "list"}).exit_code == 0);
}

TEST_CASE("ferry clean --help shows an example") {
  TestDomain domain;
  const auto r = run_program(domain, {bin_path("ferry"), "clean", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ferry clean") != std::string::npos);
  CHECK(r.out.find("Examples:") != std::string::npos);
}

TEST_CASE(
    "ferryd --group with an unknown group exits 2 naming it; a known one gives a 0660 socket") {
  TestDomain domain;
  const auto config = write_file(domain, "ok.yaml", seq_config(kTopics));
  const auto unknown =
      run_program(domain, {bin_path("ferryd"), "--config", config, "--domain", domain.name(),
                           "--group", "no-such-group-ferry", "--foreground"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown group 'no-such-group-ferry' given to --group") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(socket_of(domain)));

  const group* ours = ::getgrgid(::getgid());
  REQUIRE(ours != nullptr);
  DetachedDaemon daemon(domain, config, {"--group", ours->gr_name});
  REQUIRE(daemon.result().exit_code == 0);
  struct stat st {};
  REQUIRE(::stat(socket_of(domain).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  CHECK(st.st_gid == ::getgid());
  CHECK(run_program(domain, {bin_path("ferry"), "topic", "list"}).exit_code == 0);
  REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
  CHECK(eventually([&] { return process_gone(daemon.pid()); }, std::chrono::seconds(2)));
}

TEST_CASE("with --group, a process of another uid in that group uses the domain end to end" *
          ferry::test::needs_root()) {
  const group* g = ::getgrnam("nogroup");
  if (g == nullptr) g = ::getgrnam("users");
  REQUIRE(g != nullptr);
  const gid_t gid = g->gr_gid;
  TestDomain domain;
  ferry::test::use_domain_env(domain);
  const auto config = write_file(domain, "ok.yaml", seq_config(kTopics));
  DetachedDaemon daemon(domain, config, {"--group", g->gr_name});
  REQUIRE(daemon.result().exit_code == 0);
  struct stat st {};
  REQUIRE(::stat(domain.runtime_dir().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0750);
  CHECK(st.st_gid == gid);

  ferry::Node node{"insider"};
  auto pub = node.publisher<Seq>("t");
  ferry::test::Child outsider([gid] {
    // Another user, whose group is the daemon's --group.
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(ferry::test::kNobody) != 0)
      return 3;
    try {
      ferry::Node other{"outsider"};
      auto sub = other.subscriber<Seq>("t");
      auto s = sub.take(std::chrono::seconds(10));
      return s && (*s)->seq == 7 ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "outsider: %s\n", e.what());
      return 2;
    }
  });
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.publish(make_seq(1, 7)).delivered == 1);
  CHECK(outsider.wait() == 0);
  // Every object of the domain belongs to the group, mode 0660.
  for (const auto& name : ferry::transport::list_domain_objects(domain.name())) {
    CAPTURE(name);
    REQUIRE(::stat(("/dev/shm/" + name).c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0660);
    CHECK(st.st_gid == gid);
  }
  REQUIRE(::kill(daemon.pid(), SIGTERM) == 0);
  CHECK(eventually([&] { return process_gone(daemon.pid()); }, std::chrono::seconds(2)));
}
