// The `ferry` and `ferryd` programs run as a user would: exit codes, error
// sentences and JSON output.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "daemon_fixture.hpp"
#include "ferry/transport/names.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using ferry::test::bin_path;
using ferry::test::Daemon;
using ferry::test::run_program;
using ferry::test::TestDomain;

namespace {
std::string write_file(const TestDomain& domain, const std::string& name, const std::string& text) {
  const std::string path = (domain.runtime_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("ferry config check accepts a valid file and names what it found") {
  TestDomain domain;
  const auto path = write_file(domain, "ok.yaml", seq_config("  - { name: t, type: Seq }\n"));
  const auto r = run_program(domain, {bin_path("ferry"), "config", "check", path});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ok (1 type(s), 1 topic(s))") != std::string::npos);
}

TEST_CASE("ferry config check prints every problem with file:line:col and exits 2") {
  TestDomain domain;
  const auto path = write_file(domain, "bad.yaml",
                               "topics:\n"
                               "  - { name: a, type: bytes, max_size: 64, capasity: 8 }\n"
                               "  - { name: b, type: bytes, max_size: 64, policy: fastest }\n");
  const auto r = run_program(domain, {bin_path("ferry"), "config", "check", path});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(path + ":2:43: unknown key 'capasity'") != std::string::npos);
  CHECK(r.err.find("did you mean 'capacity'") != std::string::npos);
  CHECK(r.err.find(path + ":3:51:") != std::string::npos);
  CHECK(r.err.find("block, drop_new, drop_oldest") != std::string::npos);
}

TEST_CASE("ferryd refuses a bad configuration with file:line:col and exit code 2") {
  TestDomain domain;
  const auto path = write_file(domain, "bad.yaml", "topics:\n  - { name: a, type: Nope }\n");
  const auto r = run_program(domain, {bin_path("ferryd"), "--config", path, "--foreground"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(path + ":2:") != std::string::npos);
  CHECK(r.err.find("Nope") != std::string::npos);
}

TEST_CASE("ferryd refuses a bad domain name and a second daemon for the same domain") {
  TestDomain domain;
  const auto path = write_file(domain, "ok.yaml", seq_config("  - { name: t, type: Seq }\n"));
  auto bad = run_program(domain, {bin_path("ferryd"), "--config", path, "--domain", "no/slash",
                                  "--foreground"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("no/slash") != std::string::npos);

  Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
  auto second = run_program(domain, {bin_path("ferryd"), "--config", path, "--domain",
                                     domain.name(), "--foreground"});
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("another ferryd") != std::string::npos);
}

TEST_CASE("ferryd stops on SIGTERM and removes its socket and shared-memory objects") {
  TestDomain domain;
  {
    Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
    ferry::test::use_domain_env(domain);
    ferry::Node node{"n"};
    auto pub = node.publisher<Seq>("t");
    auto sub = node.subscriber<Seq>("t");
    CHECK(eventually([&] { return pub.subscriber_count() == 1; }));
    CHECK_FALSE(ferry::transport::list_domain_objects(domain.name()).empty());
    CHECK(daemon.stop() == 0);
  }
  CHECK(ferry::transport::list_domain_objects(domain.name()).empty());
  CHECK_FALSE(std::filesystem::exists(domain.runtime_dir() / (domain.name() + ".sock")));
}

TEST_CASE("ferry topic list shows declared and live topics, as a table and as JSON") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: robot/pose, type: Seq, capacity: 16, policy: drop_new }\n"));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"lister"};
  auto pub = node.publisher<Seq>("robot/pose");
  auto sub1 = node.subscriber<Seq>("robot/pose");
  auto sub2 = node.subscriber<Seq>("robot/pose");

  const auto json_run = run_program(domain, {bin_path("ferry"), "topic", "list", "--json"});
  REQUIRE(json_run.exit_code == 0);
  const auto topics = nlohmann::json::parse(json_run.out);
  REQUIRE(topics.is_array());
  REQUIRE(topics.size() == 1);
  CHECK(topics[0]["name"] == "robot/pose");
  CHECK(topics[0]["type"] == "Seq");
  CHECK(topics[0]["policy"] == "drop_new");
  CHECK(topics[0]["capacity"] == 16);
  CHECK(topics[0]["publishers"] == 1);
  CHECK(topics[0]["subscribers"] == 2);

  const auto table = run_program(domain, {bin_path("ferry"), "--domain", domain.name(), "topic", "list"});
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("robot/pose") != std::string::npos);
  CHECK(table.out.find("drop_new") != std::string::npos);
}

TEST_CASE("ferry without a daemon exits 1 naming the socket; bad usage exits 2") {
  TestDomain domain;
  const auto r = run_program(domain, {bin_path("ferry"), "topic", "list"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(domain.name() + ".sock") != std::string::npos);
  CHECK(r.err.find("ferryd --config") != std::string::npos);
  CHECK(run_program(domain, {bin_path("ferry"), "topic", "frobnicate"}).exit_code == 2);
  CHECK(run_program(domain, {bin_path("ferry"), "--domain", "bad name", "topic", "list"}).exit_code == 2);
  CHECK(run_program(domain, {bin_path("ferry"), "--version"}).exit_code == 0);
}

TEST_CASE("ferryd removes the shared-memory objects a dead daemon of its domain left behind") {
  TestDomain domain;
  const std::string stale = "/" + ferry::transport::shm_name(domain.name(), "ring.1.2");
  const int fd = ::shm_open(stale.c_str(), O_CREAT | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  ::close(fd);
  Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
  // The socket accepts (queued) before the daemon's loop starts; the clean-up
  // comes first in the loop's setup.
  CHECK(eventually([&] {
    const auto names = ferry::transport::list_domain_objects(domain.name());
    return std::find(names.begin(), names.end(), stale.substr(1)) == names.end();
  }));
}
