// Who may use a domain and its topics, decided by ferryd from the kernel's
// SO_PEERCRED of each connection: a topic's `allow:` lists and ferryd's
// --group. The clients are real other users: children of this (root) test
// that drop to other uids and gids before they join.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "ferry/discovery/node_lock.hpp"
#include "ferry/transport/names.hpp"
#include "privileges.hpp"
#include "pubsub_util.hpp"
#include "skip.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using ferry::test::Child;
using ferry::test::Daemon;
using ferry::test::TestDomain;

namespace {

// Switching to another uid needs root (CI runs as root): elsewhere these
// cases show as skipped in doctest's summary.
const bool kNotRoot = ::geteuid() != 0;

constexpr uid_t kNobody = 65534;  // "nobody" in Debian's base-passwd
constexpr uid_t kNoName = 64999;  // a uid no user database names

gid_t gid_of(const char* group_name) {
  const group* g = ::getgrnam(group_name);
  REQUIRE_MESSAGE(g != nullptr, "group '" << group_name << "' is missing on this machine");
  return g->gr_gid;
}

// Runs `body` in a child as `uid` with primary group `gid` and the
// supplementary `groups`; returns what it returned, or the ferry::Error it
// threw prefixed with "error: " (read back through a pipe).
std::string as_user(uid_t uid, gid_t gid, const std::vector<gid_t>& groups,
                    const std::function<std::string()>& body) {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  Child child([&] {
    ::close(pipe_fds[0]);
    if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(gid) != 0 ||
        ::setuid(uid) != 0) {
      return 3;
    }
    std::string said;
    try {
      said = body();
    } catch (const ferry::Error& e) {
      said = std::string("error: ") + e.what();
    }
    return ::write(pipe_fds[1], said.data(), said.size()) == static_cast<ssize_t>(said.size()) ? 0
                                                                                               : 4;
  });
  ::close(pipe_fds[1]);
  std::string said;
  pollfd p{pipe_fds[0], POLLIN, 0};
  char buf[1024];
  // Until the child closes its end (it exits), at most 20 s.
  for (int polls = 0; polls < 200 && ::poll(&p, 1, 100) >= 0; ++polls) {
    if ((p.revents & (POLLIN | POLLHUP)) == 0) continue;
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  CHECK(child.wait(5s) == 0);
  return said;
}

// A domain whose ferryd admits the group `users` (one topic `t`), and this
// process's environment pointing at it.
struct GroupDomain {
  GroupDomain() { ferry::test::use_domain_env(domain); }
  TestDomain domain;
  Daemon daemon{domain, seq_config("  - { name: t, type: Seq }\n"), {"--group", "users"}};
};

}  // namespace

TEST_CASE("allow: admits the listed user and refuses another uid, naming topic and user" *
          doctest::skip(kNotRoot)) {
  TestDomain domain;
  // --group admits every client in the group to the domain; allow: then
  // decides per topic and direction.
  Daemon daemon(domain,
                seq_config("  - { name: guarded, type: Seq, allow: { publish: [root], "
                           "subscribe: [nobody] } }\n"
                           "  - { name: open, type: Seq }\n"),
                {"--group", "nogroup"});
  ferry::test::use_domain_env(domain);
  const gid_t nogroup = gid_of("nogroup");
  ferry::Node owner{"owner"};
  auto pub = owner.publisher<Seq>("guarded");

  // nobody may subscribe (and gets what root publishes), not publish.
  Child reader([&] {
    if (::setgroups(0, nullptr) != 0 || ::setgid(nogroup) != 0 || ::setuid(kNobody) != 0) return 3;
    ferry::Node node{"reader"};
    auto sub = node.subscriber<Seq>("guarded");
    auto s = sub.take(10s);
    return s && (*s)->seq == 7 ? 0 : 1;
  });
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.publish(make_seq(1, 7)).delivered == 1);
  CHECK(reader.wait(10s) == 0);
  const std::string nobody_publishes = as_user(kNobody, nogroup, {}, [] {
    ferry::Node node{"would-publish"};
    auto p = node.publisher<Seq>("guarded");
    return std::string("admitted");
  });
  CHECK(nobody_publishes ==
        "error: user 'nobody' (uid 65534) may not publish on topic 'guarded' (see its 'allow:')");

  // Another uid of the same group is in the domain but not on the topic;
  // the open topic stays open to it.
  const std::string other = as_user(kNoName, nogroup, {}, [] {
    ferry::Node node{"outsider"};
    auto open = node.subscriber<Seq>("open");
    try {
      auto s = node.subscriber<Seq>("guarded");
    } catch (const ferry::Error& e) {
      return std::string("refused: ") + e.what();
    }
    return std::string("admitted");
  });
  CHECK(other ==
        "refused: user '64999' (uid 64999) may not subscribe to topic 'guarded' (see its "
        "'allow:')");
}

TEST_CASE_FIXTURE(
    GroupDomain,
    "ferryd --group refuses a uid outside the group even when it can reach the socket" *
        doctest::skip(kNotRoot)) {
  const gid_t users = gid_of("users");
  const gid_t nogroup = gid_of("nogroup");
  const auto join = [] {
    ferry::Node node{"visitor"};
    auto sub = node.subscriber<Seq>("t");
    return std::string("admitted");
  };
  // The group as a supplementary group opens the runtime directory and the
  // socket (mode 0660) to the process, but SO_PEERCRED carries only its uid
  // and primary gid, and the user database does not put nobody in the group:
  // ferryd itself must refuse it.
  const std::string outsider = as_user(kNobody, nogroup, {users}, join);
  CAPTURE(outsider);
  CHECK(outsider.starts_with("error: "));
  CHECK(outsider.find("uid 65534 (gid 65534) may not use domain '" + domain.name() +
                      "': it is not a member of group 'users'") != std::string::npos);
  // The same uid with the group as its primary gid is a member.
  CHECK(as_user(kNobody, users, {}, join) == "admitted");
  // ferryd goes on serving.
  ferry::Node owner{"owner"};
  auto pub = owner.publisher<Seq>("t");
  CHECK(pub.subscriber_count() == 0);
}

TEST_CASE_FIXTURE(GroupDomain,
                  "a --group member's node is watched by its lock, which ferryd made for it" *
                      doctest::skip(kNotRoot)) {
  const gid_t users = gid_of("users");
  const std::string prefix = domain.name() + ".node-";
  // The domain's node lock files in the runtime directory, and how many of
  // them a live process holds, as a process sees them.
  const auto locks = [this, &prefix] {
    int files = 0, held = 0;
    for (const auto& entry : std::filesystem::directory_iterator(domain.runtime_dir())) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with(prefix) || !name.ends_with(".lock")) continue;
      ++files;
      if (ferry::discovery::probe_node_lock(entry.path()) ==
          ferry::discovery::NodeLockState::Held) {
        ++held;
      }
    }
    return std::to_string(files) + " file(s), " + std::to_string(held) + " held";
  };
  // A member may not write in the runtime directory (0750), so it cannot make
  // its own lock: ferryd makes it and hands it over. The member itself, and
  // any other member, can see that it is held.
  const std::string seen = as_user(kNobody, users, {}, [&] {
    ferry::Node node{"member"};
    auto sub = node.subscriber<Seq>("t");
    return locks();
  });
  CHECK(seen == "1 file(s), 1 held");
  // Its process gone, ferryd frees the slot and removes the lock file.
  CHECK(ferry::test::eventually([&] { return locks() == "0 file(s), 0 held"; }, 5s));
}

TEST_CASE(
    "another user's objects at a domain's port names stop neither ferryd nor its ports, "
    "and ferry clean names their owner" *
    doctest::skip(kNotRoot)) {
  TestDomain domain;
  ferry::test::use_domain_env(domain);
  constexpr uid_t kOwner = 64998;  // the domain's user: ferryd and its node, not root
  REQUIRE(::chown(domain.runtime_dir().c_str(), kOwner, kOwner) == 0);
  // nobody makes the names the first ports would get: doorbells and rings.
  Child squatter([&] {
    if (!ferry::test::drop_root()) return 3;
    int made = 0;
    for (int i = 1; i <= 50; ++i) {
      for (const std::string& what : {"bell." + std::to_string(i),
                                      "ring." + std::to_string(i) + "." + std::to_string(i + 1)}) {
        const std::string name = "/ferry." + domain.name() + "." + what;
        const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
        if (fd >= 0) {
          ++made;
          ::close(fd);
        }
      }
    }
    return made == 100 ? 0 : 4;
  });
  REQUIRE(squatter.wait(10s) == 0);

  Daemon daemon{domain, seq_config("  - { name: t, type: Seq }\n"), {}, {kOwner, kOwner}};
  const auto round_trip = [&] {
    ferry::Node node{"owner"};
    std::vector<ferry::Subscriber<Seq>> subs;
    for (int i = 0; i < 4; ++i) subs.push_back(node.subscriber<Seq>("t"));
    auto pub = node.publisher<Seq>("t");
    if (!pub.wait_for_subscribers(4, 5s)) return std::string("unmatched");
    (void)pub.publish(make_seq(1, 1));
    int received = 0;
    for (auto& sub : subs) received += sub.take(2s) ? 1 : 0;
    return std::to_string(received) + " received";
  };
  CHECK(as_user(kOwner, kOwner, {}, round_trip) == "4 received");
  CHECK(as_user(kOwner, kOwner, {}, round_trip) == "4 received");
  CHECK(daemon.log().find("leaving another user's object alone") != std::string::npos);
  REQUIRE(daemon.stop() == 0);

  // ferryd restarts over them, and stops again.
  daemon.start();
  CHECK(as_user(kOwner, kOwner, {}, round_trip) == "4 received");
  REQUIRE(daemon.stop() == 0);

  // The domain's user cannot remove them and says whose they are.
  const std::string cleaned = as_user(kOwner, kOwner, {}, [&] {
    const auto r = ferry::test::run_program(domain, {ferry::test::bin_path("ferry"), "clean"});
    return std::to_string(r.exit_code) + "|" + r.err;
  });
  CHECK(cleaned.starts_with("1|"));
  CHECK(cleaned.find("another user's object (owner uid 65534)") != std::string::npos);
  // Root can, and the domain is empty afterwards.
  const auto by_root = ferry::test::run_program(domain, {ferry::test::bin_path("ferry"), "clean"});
  CHECK(by_root.exit_code == 0);
  CHECK(ferry::transport::list_domain_objects(domain.name()).empty());
}

TEST_CASE(
    "ferryd --group admits a user whose supplementary group it is in the user database, and "
    "only then" *
    doctest::skip(kNotRoot)) {
  // A user database where nobody is a supplementary member of a group of
  // its own: /etc/group bind-mounted over, in a mount namespace of a child
  // (this process's view stays). ferryd, started in there, sees it too.
  TestDomain domain;
  const std::filesystem::path group_file = domain.runtime_dir() / "group";
  constexpr gid_t kCrew = 64990;
  {
    std::ifstream in("/etc/group");
    std::stringstream text;
    text << in.rdbuf();
    std::ofstream(group_file) << text.str() << "ferrycrew:x:" << kCrew << ":nobody\n";
  }
  Child scenario([&] {
    if (::unshare(CLONE_NEWNS) != 0) return 77;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 78;
    if (::mount(group_file.c_str(), "/etc/group", nullptr, MS_BIND, nullptr) != 0) return 79;
    Daemon daemon{domain, seq_config("  - { name: t, type: Seq }\n"), {"--group", "ferrycrew"}};
    ferry::test::use_domain_env(domain);
    const auto join = [] {
      ferry::Node node{"crew"};
      auto sub = node.subscriber<Seq>("t");
      return std::string("admitted");
    };
    // Its process has the group (as a login session would) but the socket's
    // credentials carry only its primary gid: ferryd asks the user database.
    const gid_t nogroup = gid_of("nogroup");
    if (as_user(kNobody, nogroup, {kCrew}, join) != "admitted") return 1;
    // Another uid with the same process groups is no member: refused.
    if (!as_user(kNoName, nogroup, {kCrew}, join).starts_with("error: ")) return 2;
    return daemon.stop() == 0 ? 0 : 3;
  });
  const int code = scenario.wait(30s);
  if (code == 77 || code == 78 || code == 79) {
    ferry::test::skip_test(
        "a mount namespace (to give the test its own /etc/group) is not "
        "permitted here");
    return;
  }
  CHECK(code == 0);
}
