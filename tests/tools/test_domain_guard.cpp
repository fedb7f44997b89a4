// Shared-memory names are global, runtime directories and users are not.
// Item 11 of issue 19: a ferryd holds its domain's lock in /dev/shm, so that
// neither `ferry clean` nor a second ferryd given another runtime directory
// touches a live domain. Item 12: objects another uid made, or left wider
// open than configured, are refused, by ferryd and by nodes, with a sentence.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon_fixture.hpp"
#include "ferry/ferry.hpp"
#include "ferry/transport/names.hpp"
#include "privileges.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config("  - { name: t, type: Seq }\n");

using Served = ferry::test::ServedDomain<kConfig>;

// Makes /dev/shm/ferry.<domain>.<what> with `mode`, owned by `uid`.
void plant(const TestDomain& domain, const std::string& what, mode_t mode, uid_t uid) {
  const std::string name = "/" + ferry::transport::shm_name(domain.name(), what);
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  CHECK(::ftruncate(fd, 4096) == 0);
  CHECK(::fchmod(fd, mode) == 0);
  CHECK(::fchown(fd, uid, static_cast<gid_t>(-1)) == 0);
  ::close(fd);
}

// The socket accepts before the daemon's setup made the pool and the
// heartbeat table (made last).
void wait_for_objects(const TestDomain& domain) {
  const std::string registry = ferry::transport::shm_name(domain.name(), "registry");
  REQUIRE(eventually([&] {
    const auto names = ferry::transport::list_domain_objects(domain.name());
    return std::find(names.begin(), names.end(), registry) != names.end();
  }));
}

ferry::test::RunResult ferryd_elsewhere(const TestDomain& domain, const std::string& config) {
  const auto other = domain.runtime_dir() / "elsewhere";
  return ferry::test::run_program(
      domain,
      {"/usr/bin/env", "FERRY_RUNTIME_DIR=" + other.string(), ferry::test::bin_path("ferryd"),
       "--config", config, "--domain", domain.name(), "--foreground"},
      3s);
}

}  // namespace

TEST_CASE("ferry clean with another runtime directory refuses a live domain") {
  TestDomain domain;
  Daemon daemon(domain, kConfig);
  wait_for_objects(domain);
  const auto before = ferry::transport::list_domain_objects(domain.name());
  const auto r = ferry::test::run_program(
      domain, {"/usr/bin/env", "FERRY_RUNTIME_DIR=/nonexistent", ferry::test::bin_path("ferry"),
               "--domain", domain.name(), "clean"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ferry." + domain.name() + ".lock") != std::string::npos);
  CHECK(r.err.find(std::to_string(daemon.pid())) != std::string::npos);
  CHECK(ferry::transport::list_domain_objects(domain.name()) == before);
}

TEST_CASE_FIXTURE(Served, "a second ferryd with another runtime directory refuses a live domain") {
  ferry::Node node{"n"};
  auto [pub, sub] = matched_ports<Seq>(node, "t");
  const auto before = ferry::transport::list_domain_objects(domain.name());

  const auto r = ferryd_elsewhere(domain, daemon.config_path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ferry." + domain.name() + ".lock") != std::string::npos);
  // The domain is whole and works.
  CHECK(ferry::transport::list_domain_objects(domain.name()) == before);
  CHECK(pub.publish(make_seq(1, 1)).delivered == 1);
  CHECK(sub.take(2s));
}

TEST_CASE("ferry clean removes a dead domain's lock with the rest") {
  TestDomain domain;
  {
    Daemon daemon(domain, kConfig);
    daemon.kill9();
  }
  REQUIRE_FALSE(ferry::transport::list_domain_objects(domain.name()).empty());
  const auto r = ferry::test::run_program(domain, {ferry::test::bin_path("ferry"), "clean"});
  CHECK(r.exit_code == 0);
  CHECK(ferry::transport::list_domain_objects(domain.name()).empty());
}

TEST_CASE("ferryd refuses a domain object another uid planted, naming it and its owner" *
          needs_root()) {
  TestDomain domain;
  plant(domain, "registry", 0600, kNobody);
  const auto config = (domain.runtime_dir() / "ferry.yaml").string();
  std::ofstream(config) << kConfig;
  const auto r = ferry::test::run_program(
      domain, {ferry::test::bin_path("ferryd"), "--config", config, "--foreground"}, 3s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ferry." + domain.name() + ".registry is owned by uid 65534") !=
        std::string::npos);
}

TEST_CASE("ferryd refuses a domain lock another uid planted" * needs_root()) {
  TestDomain domain;
  plant(domain, "lock", 0600, kNobody);
  const auto config = (domain.runtime_dir() / "ferry.yaml").string();
  std::ofstream(config) << kConfig;
  const auto r = ferry::test::run_program(
      domain, {ferry::test::bin_path("ferryd"), "--config", config, "--foreground"}, 3s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ferry." + domain.name() + ".lock is owned by uid 65534") != std::string::npos);
}

TEST_CASE("ferryd refuses to adopt a pool left wider open than its mode" * needs_root()) {
  TestDomain domain;
  plant(domain, "pool", 0666, ::geteuid());
  const auto config = (domain.runtime_dir() / "ferry.yaml").string();
  std::ofstream(config) << kConfig;
  const auto r = ferry::test::run_program(
      domain, {ferry::test::bin_path("ferryd"), "--config", config, "--foreground"}, 3s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("with mode 0666, expected uid 0 and mode 0600 at most") != std::string::npos);
}

TEST_CASE_FIXTURE(Served,
                  "a node refuses a domain object that is not ferryd's, is world-writable or is "
                  "a symlink" *
                      needs_root()) {
  wait_for_objects(domain);
  const std::string name = ferry::transport::shm_name(domain.name(), "pool");
  const std::string pool = "/dev/shm/" + name;
  REQUIRE(::chown(pool.c_str(), kNobody, static_cast<gid_t>(-1)) == 0);
  CHECK_THROWS_WITH_AS(ferry::Node{"n"}, doctest::Contains("owned by uid 65534"), ferry::Error);
  REQUIRE(::chown(pool.c_str(), 0, static_cast<gid_t>(-1)) == 0);
  // ferryd's, but open to every user: anyone could have written into it.
  REQUIRE(::chmod(pool.c_str(), 0666) == 0);
  const std::string wide = pool + " is owned by uid 0 with mode 0666";
  CHECK_THROWS_WITH_AS(ferry::Node{"n"}, doctest::Contains(wide.c_str()), ferry::Error);
  REQUIRE(::chmod(pool.c_str(), 0600) == 0);
  // A symlink in its place, even to ferryd's own object.
  const std::string moved = "/dev/shm/moved-" + name;
  REQUIRE(::rename(pool.c_str(), moved.c_str()) == 0);
  REQUIRE(::symlink(moved.c_str(), pool.c_str()) == 0);
  std::string refused;
  try {
    ferry::Node node{"n"};
  } catch (const ferry::Error& e) {
    refused = e.what();
  }
  CHECK(::unlink(pool.c_str()) == 0);
  REQUIRE(::rename(moved.c_str(), pool.c_str()) == 0);
  CAPTURE(refused);
  CHECK(refused.find(name) != std::string::npos);
  ferry::Node node{"n"};  // ferryd's own again: accepted
}
