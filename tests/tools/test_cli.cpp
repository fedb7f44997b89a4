// The `ferry` and `ferryd` programs run as a user would: exit codes, error
// sentences and JSON output.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/transport/names.hpp"
#include "json_text.hpp"
#include "pubsub_util.hpp"
#include "temp_files.hpp"
#include "test_domain.hpp"
#include "text_lines.hpp"

using namespace ferry::test;

namespace {
// Runs `ferry ARGS...` with FERRY_DOMAIN naming another (unserved) domain of
// the same runtime directory, so that only a --domain on the command line
// reaches the test's domain.
RunResult ferry_elsewhere(const TestDomain& domain, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/env", "FERRY_DOMAIN=" + domain.name() + "x",
                                bin_path("ferry")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(domain, argv);
}

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

// The error format of docs/cli/index.md: exactly one line on stderr, "ferry: ...".
void check_one_line_error(const RunResult& r) {
  CHECK(r.err.rfind("ferry: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
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

// Issue 19: hostile files are refused with a sentence, in a moment, by the
// checker and the daemon alike (each would crash, hang or grow before).
TEST_CASE("ferry config check and ferryd refuse a 10,000-deep type chain, a FIFO and a huge file") {
  TestDomain domain;
  std::string deep = "types:\n";
  for (int i = 0; i < 10'000; ++i)
    deep += "  T" + std::to_string(i) + ": { fields: [{ name: next, type: " +
            (i + 1 < 10'000 ? "T" + std::to_string(i + 1) : std::string("u8")) + " }] }\n";
  const auto chain = write_file(domain, "deep.yaml", deep);
  const auto fifo = (domain.runtime_dir() / "fifo.yaml").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto huge = write_file(domain, "huge.yaml", std::string(5u << 20, '#'));
  const std::vector<std::pair<std::string, std::string>> cases{
      {chain, chain + ":2:38: type 'T0' nests types 10000 levels deep"},
      {fifo, fifo + ": is a FIFO, not a regular file; expected a YAML file"},
      {huge, huge + ": is 5242880 bytes, over the 4 MiB limit for a configuration file"}};
  for (const auto& [path, error] : cases) {
    CAPTURE(path);
    const auto check =
        run_program(domain, {bin_path("ferry"), "config", "check", path}, std::chrono::seconds(10));
    CHECK(check.exit_code == 2);
    CHECK(check.err.starts_with(error));
    const auto daemon = run_program(domain, {bin_path("ferryd"), "--config", path, "--foreground"},
                                    std::chrono::seconds(10));
    CHECK(daemon.exit_code == 2);
    CHECK(daemon.err.starts_with("ferryd: " + error));
  }
}

TEST_CASE("ferry config check lists 100 problems, then says how many more and where") {
  TestDomain domain;
  std::string yaml = "liveness:\n";
  for (int i = 0; i < 150; ++i) yaml += "  banana" + std::to_string(i) + ": 1\n";
  const auto path = write_file(domain, "many.yaml", yaml);
  const auto r = run_program(domain, {bin_path("ferry"), "config", "check", path});
  CHECK(r.exit_code == 2);
  const auto err = lines_of(r.err);
  REQUIRE(err.size() == 102);
  CHECK(err[99].starts_with(path + ":101:3: unknown key 'banana99'"));
  CHECK(err[100] ==
        path +
            ":102:3: 50 more problems from here on are not listed; expected at most 100 "
            "at once (fix these and check again)");
  CHECK(err[101] == "ferry: over 100 problems in " + path);
}

TEST_CASE("ferryd refuses a bad domain name and a second daemon for the same domain") {
  TestDomain domain;
  const auto path = write_file(domain, "ok.yaml", seq_config("  - { name: t, type: Seq }\n"));
  auto bad = run_program(
      domain, {bin_path("ferryd"), "--config", path, "--domain", "no/slash", "--foreground"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("no/slash") != std::string::npos);

  Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
  auto second = run_program(
      domain, {bin_path("ferryd"), "--config", path, "--domain", domain.name(), "--foreground"});
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("another ferryd") != std::string::npos);
}

TEST_CASE("ferryd stops on SIGTERM with no node left and removes its socket and objects") {
  TestDomain domain;
  {
    Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
    ferry::test::use_domain_env(domain);
    {
      ferry::Node node{"n"};
      auto pub = node.publisher<Seq>("t");
      auto sub = node.subscriber<Seq>("t");
      CHECK(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
      CHECK_FALSE(ferry::transport::list_domain_objects(domain.name()).empty());
    }
    // (With nodes alive it would leave the domain to them: test_stop_with_nodes.)
    CHECK(daemon.stop() == 0);
  }
  CHECK(ferry::transport::list_domain_objects(domain.name()).empty());
  CHECK_FALSE(std::filesystem::exists(domain.runtime_dir() / (domain.name() + ".sock")));
}

TEST_CASE("ferry topic list shows declared and live topics, as a table and as JSON") {
  TestDomain domain;
  Daemon daemon(
      domain, seq_config("  - { name: robot/pose, type: Seq, capacity: 16, policy: drop_new }\n"));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"lister"};
  auto pub = node.publisher<Seq>("robot/pose");
  auto sub1 = node.subscriber<Seq>("robot/pose");
  auto sub2 = node.subscriber<Seq>("robot/pose");

  const auto json_run = run_program(domain, {bin_path("ferry"), "topic", "list", "--json"});
  REQUIRE(json_run.exit_code == 0);
  const auto topics = ferry::test::parse_json(json_run.out);
  REQUIRE(topics.is_array());
  REQUIRE(topics.size() == 1);
  CHECK(topics[0]["name"] == "robot/pose");
  CHECK(topics[0]["type"] == "Seq");
  CHECK(topics[0]["policy"] == "drop_new");
  CHECK(topics[0]["capacity"] == 16);
  CHECK(topics[0]["publishers"] == 1);
  CHECK(topics[0]["subscribers"] == 2);

  const auto table =
      run_program(domain, {bin_path("ferry"), "--domain", domain.name(), "topic", "list"});
  CHECK(table.exit_code == 0);
  const auto rows = lines_of(table.out);
  REQUIRE(rows.size() == 2);
  CHECK(words_of(rows[0]) == std::vector<std::string>{"TOPIC", "TYPE", "POLICY", "CAPACITY", "PUBS",
                                                      "SUBS", "RATE(Hz)"});
  // Nothing is published: the queues exist, so the rate is measured, and 0.
  CHECK(words_of(rows[1]) ==
        std::vector<std::string>{"robot/pose", "Seq", "drop_new", "16", "1", "2", "0.0"});
  // Columns line up: each value starts where its header does.
  for (const char* header : {"TYPE", "POLICY", "CAPACITY", "PUBS", "SUBS", "RATE(Hz)"}) {
    CAPTURE(header);
    const auto at = rows[0].find(header);
    REQUIRE(at != std::string::npos);
    CHECK(rows[1][at] != ' ');
    CHECK(rows[1][at - 1] == ' ');
  }
}

TEST_CASE("ferry without a daemon exits 1 naming the socket; bad usage exits 2") {
  TestDomain domain;
  const auto r = run_program(domain, {bin_path("ferry"), "topic", "list"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find(domain.name() + ".sock") != std::string::npos);
  CHECK(r.err.find("ferryd --config") != std::string::npos);
  CHECK(run_program(domain, {bin_path("ferry"), "topic", "frobnicate"}).exit_code == 2);
  CHECK(
      run_program(domain, {bin_path("ferry"), "--domain", "bad name", "topic", "list"}).exit_code ==
      2);
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

TEST_CASE(
    "--domain works after the verb and between its words, for every verb that reads a domain") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: t, type: Seq, capacity: 8 }\n"));
  const std::string& d = domain.name();
  const std::string wrong = d + "x";  // FERRY_DOMAIN of ferry_elsewhere: nothing serves it

  // Without --domain the environment's domain is used, and nothing serves it.
  const auto unserved = ferry_elsewhere(domain, {"topic", "list"});
  CHECK(unserved.exit_code == 1);
  CHECK(unserved.err.find(wrong + ".sock") != std::string::npos);

  struct Case {
    std::vector<std::string> args;
    std::function<bool(const nlohmann::json&)> ok;
  };
  const auto lists_t = [](const nlohmann::json& j) {
    return j.is_array() && j.size() == 1 && j[0]["name"] == "t";
  };
  for (const Case& c : {
           Case{{"topic", "list", "--json", "--domain", d}, lists_t},
           Case{{"topic", "list", "--domain", d, "--json"}, lists_t},
           Case{{"topic", "--domain", d, "list", "--json"}, lists_t},
           Case{{"--domain", d, "topic", "list", "--json"}, lists_t},
           Case{{"--domain", d, "topic", "list", "--json", "--domain", d},
                lists_t},  // twice, same name
           Case{{"topic", "info", "t", "--domain", d, "--json"},
                [](const nlohmann::json& j) { return j["name"] == "t" && j["capacity"] == 8; }},
           Case{{"node", "list", "--json", "--domain", d},
                [](const nlohmann::json& j) { return j.is_array(); }},
           Case{{"node", "--domain", d, "list", "--json"},
                [](const nlohmann::json& j) { return j.is_array(); }},
           Case{{"pool", "--json", "--domain", d},
                [](const nlohmann::json& j) { return j.contains("classes"); }},
       }) {
    const std::string command = joined(c.args);
    CAPTURE(command);
    const auto r = ferry_elsewhere(domain, c.args);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    REQUIRE_NOTHROW(ferry::test::parse_json(r.out));
    CHECK(c.ok(ferry::test::parse_json(r.out)));
  }

  // clean after the verb reaches the served domain: refused, it is alive.
  const auto live = ferry_elsewhere(domain, {"clean", "--domain", d});
  CHECK(live.exit_code == 1);
  CHECK(live.err.find("is serving domain '" + d + "'") != std::string::npos);
  check_one_line_error(live);
  // ... and a domain nobody serves has nothing to clean.
  const auto dead = run_program(domain, {bin_path("ferry"), "clean", "--domain", wrong, "--json"});
  CHECK(dead.exit_code == 0);
  CHECK(ferry::test::parse_json(dead.out)["domain"] == wrong);

  // A wrong domain after the verb fails as before the verb: exit 1 naming its socket.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"topic", "list"},
                                               {"topic", "info", "t"},
                                               {"node", "list"},
                                               {"pool"}}) {
    const std::string command = joined(args);
    CAPTURE(command);
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--domain", wrong});
    const auto r = run_program(domain, argv);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(wrong + ".sock") != std::string::npos);
    check_one_line_error(r);
  }

  // Two different names are a usage error naming both, not a silent pick.
  const auto twice =
      run_program(domain, {bin_path("ferry"), "--domain", d, "topic", "list", "--domain", wrong});
  CHECK(twice.exit_code == 2);
  CHECK(twice.err.find("'" + d + "'") != std::string::npos);
  CHECK(twice.err.find("'" + wrong + "'") != std::string::npos);
  check_one_line_error(twice);
}

TEST_CASE("--version works after the verb too") {
  TestDomain domain;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--version"},
                                               {"topic", "list", "--version"},
                                               {"pool", "--version"},
                                               {"topic", "--version"}}) {
    const std::string command = joined(args);
    CAPTURE(command);
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_program(domain, argv);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "ferry 0.1.0\n");
  }
}

TEST_CASE(
    "usage errors are one line on stderr, prefixed 'ferry: ', naming what was wrong, exit 2") {
  TestDomain domain;  // no daemon: parsing fails before any connection
  struct Case {
    std::vector<std::string> args;
    std::string names;  // the bad token, in the sentence
    std::string see;    // where to look
  };
  for (const Case& c : {
           Case{{"frob"}, "unknown command 'frob' for 'ferry'", "see 'ferry --help'"},
           Case{{"topic", "frob"},
                "unknown command 'frob' for 'ferry topic'",
                "see 'ferry topic --help'"},
           Case{{"node", "frob", "--json"},
                "unknown command 'frob' for 'ferry node'",
                "see 'ferry node --help'"},
           Case{{"topic"},
                "'ferry topic' needs a command: list, info, echo, pub, hz, bw",
                "see 'ferry topic --help'"},
           Case{{}, "'ferry' needs a command", "see 'ferry --help'"},
           Case{{"pool", "extra"},
                "unexpected argument 'extra' for 'ferry pool'",
                "see 'ferry pool --help'"},
           Case{{"topic", "info", "a", "b"},
                "unexpected argument 'b' for 'ferry topic info'",
                "see 'ferry topic info --help'"},
           Case{{"topic", "list", "--jsn"},
                "unknown option '--jsn' for 'ferry topic list'",
                "see 'ferry topic list --help'"},
           Case{{"topic", "info", "--jsn"},
                "unknown option '--jsn' for 'ferry topic info'",
                "see 'ferry topic info --help'"},
           Case{{"--jsn", "topic", "list"},
                "unknown option '--jsn' for 'ferry'",
                "see 'ferry --help'"},
           Case{{"topic", "info"}, "TOPIC is required", "see 'ferry topic info --help'"},
           Case{{"config", "check"}, "FILE is required", "see 'ferry config check --help'"},
           Case{{"top", "--count", "x"}, "x", "see 'ferry top --help'"},
           Case{{"topic", "hz", "t", "--window", "1"}, "--window", "see 'ferry topic hz --help'"},
           Case{{"topic", "pub", "t", "{}", "--rate", "0"},
                "--rate",
                "see 'ferry topic pub --help'"},
           Case{{"topic", "list", "--domain"}, "--domain", "see 'ferry topic list --help'"},
           // A negative count was read as 2^64 - 1 (forever), inf as a rate.
           Case{{"topic", "pub", "t", "{}", "--count", "-1"},
                "--count: expected a count (0 or more), got '-1'",
                "see 'ferry topic pub --help'"},
           Case{{"topic", "echo", "t", "-n", "-2"},
                "expected a count (0 or more), got '-2'",
                "see 'ferry topic echo --help'"},
           Case{{"top", "--count", "1.5"},
                "expected a count (0 or more), got '1.5'",
                "see 'ferry top --help'"},
           Case{{"topic", "pub", "t", "{}", "--rate", "inf"},
                "--rate: expected a number, got 'inf'",
                "see 'ferry topic pub --help'"},
           Case{{"topic", "hz", "t", "--duration", "nan"},
                "--duration: expected a number, got 'nan'",
                "see 'ferry topic hz --help'"},
           Case{{"service", "call", "s", "{}", "--timeout", "0"},
                "--timeout: must be above 0, got 0",
                "see 'ferry service call --help'"},
           Case{{"service", "call", "s", "{}", "--timeout", "-1"},
                "--timeout: expected a count (1 or more), got '-1'",
                "see 'ferry service call --help'"},
       }) {
    const std::string command = joined(c.args);
    CAPTURE(command);
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = run_program(domain, argv);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    check_one_line_error(r);
    CHECK(r.err.find(c.names) != std::string::npos);
    CHECK(r.err.find(c.see) != std::string::npos);
  }
}

TEST_CASE("ferry bench refuses --domain, before or after the verb, and does not list it" *
          doctest::skip(!FERRY_TEST_HAVE_BENCH)) {
  TestDomain domain;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "latency", "--domain", "x"},
        {"--domain", "x", "bench", "throughput"},
        {"bench", "--domain", "x", "latency"}}) {
    const std::string command = joined(args);
    CAPTURE(command);
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_program(domain, argv);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("private domain, so --domain does not apply") != std::string::npos);
    check_one_line_error(r);
  }
  for (const char* verb : {"latency", "throughput"}) {
    const auto help = run_program(domain, {bin_path("ferry"), "bench", verb, "--help"});
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--size") != std::string::npos);
    CHECK(help.out.find("--domain NAME") == std::string::npos);     // not among the options...
    CHECK(help.out.find("refuses --domain") != std::string::npos);  // ... and said why
  }
}

TEST_CASE("ferry bench in a build without the benchmarks says so, in one sentence" *
          doctest::skip(FERRY_TEST_HAVE_BENCH)) {
  TestDomain domain;
  for (const char* verb : {"latency", "throughput", "scale", "fanout"}) {
    CAPTURE(verb);
    const auto r = run_program(domain, {bin_path("ferry"), "bench", verb});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("built without its benchmarks") != std::string::npos);
    check_one_line_error(r);
  }
}
