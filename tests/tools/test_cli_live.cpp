// The live verbs against a real ferryd: hz and bw of a publisher running at a
// known rate, `ferry top` on a pseudo-terminal, node list before and after a
// node dies, pool, and every verb's help and exit codes.
#include <doctest/doctest.h>

#include <signal.h>

#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using ferry::test::Background;
using ferry::test::bin_path;
using ferry::test::Child;
using ferry::test::Daemon;
using ferry::test::ferry_json;
using ferry::test::OnTerminal;
using ferry::test::run_program;
using ferry::test::TestDomain;
using nlohmann::json;

namespace {

constexpr double kRate = 50;  // Hz

// A child publishing Seq samples on `topic` at kRate for `seconds`.
Child publisher_at_rate(const std::string& topic, double seconds) {
  return Child([topic, seconds] {
    ferry::Node node{"metronome"};
    auto pub = node.publisher<Seq>(topic);
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / kRate));
    const auto start = std::chrono::steady_clock::now();
    auto next = start;
    for (std::uint64_t i = 0; std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds);
         ++i) {
      (void)pub.publish(make_seq(1, i));
      next += period;
      std::this_thread::sleep_until(next);
    }
    return 0;
  });
}

// The JSON objects a program printed, one per line.
std::vector<json> json_lines(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  return lines;
}

const json* find_named(const json& array, const std::string& name) {
  for (const auto& item : array) {
    if (item["name"] == name) return &item;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("hz, bw, topic list and top measure a publisher running at 50 Hz") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: rate, type: Seq, capacity: 64 }\n"));
  ferry::test::use_domain_env(domain);
  Child metronome = publisher_at_rate("rate", 5.0);
  Background hz(domain, {bin_path("ferry"), "topic", "hz", "rate", "--window", "100", "--duration", "3.2", "--json"});
  Background bw(domain, {bin_path("ferry"), "topic", "bw", "rate", "--duration", "2.2", "--json"});
  Background hz_text(domain, {bin_path("ferry"), "topic", "hz", "rate", "--duration", "1.5"});

  // While they subscribe, the rings count what is published.
  REQUIRE(eventually([&] {
    const json topics = ferry_json(domain, {"topic", "list"});
    const json* t = find_named(topics, "rate");
    return t != nullptr && (*t)["subscribers"] == 3 && (*t)["publishers"] == 1;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const json* listed = nullptr;
  const json list = ferry_json(domain, {"topic", "list"});
  listed = find_named(list, "rate");
  REQUIRE(listed != nullptr);
  REQUIRE((*listed)["rate_hz"].is_number());
  CHECK((*listed)["rate_hz"].get<double>() == doctest::Approx(kRate).epsilon(0.10));

  {
    OnTerminal top(domain, {bin_path("ferry"), "top"});
    REQUIRE(top.started());
    CHECK(top.shows("RATE/s"));
    CHECK(top.shows("rate "));
    CHECK(top.shows("1/3"));  // one publisher, three subscribers
    top.type("q");
    CHECK(top.wait() == 0);
    CHECK(top.screen().find("\x1b[?1049h") != std::string::npos);  // drew full screen...
    CHECK(top.screen().find("\x1b[?1049l") != std::string::npos);  // ... and restored the terminal
  }

  REQUIRE(hz.wait() == 0);
  const auto reports = json_lines(hz.out());
  REQUIRE(reports.size() >= 3);
  const json& last = reports.back();
  CHECK(last["rate_hz"].get<double>() == doctest::Approx(kRate).epsilon(0.10));
  CHECK(last["window"].get<int>() >= 100);
  CHECK(last["min_s"].get<double>() <= last["max_s"].get<double>());
  CHECK(last["std_dev_s"].get<double>() < 0.02);
  CHECK(hz.err().empty());

  REQUIRE(bw.wait() == 0);
  const json b = json_lines(bw.out()).back();
  CHECK(b["bytes_per_s"].get<double>() == doctest::Approx(kRate * 64).epsilon(0.10));
  CHECK(b["mean_size"] == 64.0);
  CHECK(b["max_size"] == 64);

  REQUIRE(hz_text.wait() == 0);
  CHECK(hz_text.out().find("average rate: ") == 0);
  CHECK(hz_text.out().find("std dev: ") != std::string::npos);
  CHECK(metronome.wait() == 0);
}

TEST_CASE("top prints plain tables when stdout is not a terminal") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: robot/pose, type: Seq, policy: drop_new, capacity: 2 }\n"));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"tester"};
  auto pub = node.publisher<Seq>("robot/pose");
  auto sub = node.subscriber<Seq>("robot/pose");
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1; }));
  for (std::uint64_t i = 0; i < 5; ++i) (void)pub.publish(make_seq(1, i));
  const auto r = run_program(domain, {bin_path("ferry"), "top", "--count", "2"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
  const auto first = r.out.find("ferry top - domain " + domain.name());
  REQUIRE(first != std::string::npos);
  CHECK(r.out.find("ferry top - domain", first + 1) != std::string::npos);  // two tables
  std::istringstream lines(r.out);
  bool row = false;
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 80);
    if (line.rfind("robot/pose", 0) == 0) {
      row = true;
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string x; words >> x;) w.push_back(x);
      // TOPIC P/S RATE BW BACKLOG DROPPED OVERWR TIMEOUT
      REQUIRE(w.size() == 8);
      CHECK(w[1] == "1/1");
      CHECK(w[4] == "2");
      CHECK(w[5] == "3");
    }
  }
  CHECK(row);
}

TEST_CASE("node list shows each node's pid and ports, and forgets a node killed with -9") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: a, type: Seq }\n  - { name: b, type: Seq }\n"));
  ferry::test::use_domain_env(domain);
  Child victim([] {
    ferry::Node node{"victim"};
    auto pub = node.publisher<Seq>("a");
    auto sub = node.subscriber<Seq>("b");
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 0;
  });
  ferry::Node survivor{"survivor"};
  auto sub = survivor.subscriber<Seq>("a");
  REQUIRE(eventually([&] { return sub.publisher_count() == 1; }));

  const json nodes = ferry_json(domain, {"node", "list"});
  REQUIRE(nodes.size() == 2);  // the asking ferry itself is not listed
  const json* v = find_named(nodes, "victim");
  REQUIRE(v != nullptr);
  CHECK((*v)["pid"] == victim.pid());
  CHECK((*v)["publishers"] == 1);
  CHECK((*v)["subscribers"] == 1);
  CHECK((*v)["heartbeat_age_ms"].is_number_unsigned());
  CHECK((*v)["connected_ms"].is_number_unsigned());
  REQUIRE((*v)["ports"].size() == 2);
  CHECK((*v)["ports"][0] == json{{"port_id", (*v)["ports"][0]["port_id"]}, {"topic", "a"}, {"direction", "publish"}});
  CHECK((*v)["ports"][1]["topic"] == "b");
  const json* s = find_named(nodes, "survivor");
  REQUIRE(s != nullptr);
  CHECK((*s)["pid"] == ::getpid());
  CHECK((*s)["subscribers"] == 1);

  const auto text = run_program(domain, {bin_path("ferry"), "node", "list"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("NODE") == 0);
  CHECK(text.out.find("victim    " + std::to_string(victim.pid())) != std::string::npos);
  CHECK(text.out.find("pub a, sub b") != std::string::npos);

  victim.kill(SIGKILL);
  CHECK(victim.wait() == 128 + SIGKILL);
  CHECK(eventually([&] {
    const json after = ferry_json(domain, {"node", "list"});
    return after.size() == 1 && find_named(after, "survivor") != nullptr;
  }));
  CHECK(eventually([&] { return sub.publisher_count() == 0; }));
}

TEST_CASE("pool shows every size class with its chunks accounted for") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
  const json pool = ferry_json(domain, {"pool"});
  REQUIRE(pool.contains("classes"));
  REQUIRE(pool["classes"].is_array());
  for (const auto& c : pool["classes"]) {
    CHECK(c["chunk_size"].get<std::uint64_t>() > 0);
    CHECK(c["free"] == c["total"]);  // nothing runs: every chunk is free
    CHECK(c["loaned"] == 0);
    CHECK(c["in_flight"] == 0);
  }
  const auto text = run_program(domain, {bin_path("ferry"), "pool"});
  CHECK(text.exit_code == 0);
  if (pool["classes"].empty()) {
    CHECK(text.out.find("has no loaned-memory pool") != std::string::npos);
  } else {
    CHECK(text.out.find("CHUNK  TOTAL  FREE  LOANED  IN_FLIGHT") != std::string::npos);
  }
}

TEST_CASE("hz stops cleanly on Ctrl-C") {
  TestDomain domain;
  Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"));
  Background hz(domain, {bin_path("ferry"), "topic", "hz", "t"});
  CHECK(hz.out_contains("no samples yet"));
  hz.signal(SIGINT);
  CHECK(hz.wait() == 0);
  CHECK(hz.err().empty());
}

TEST_CASE("without a daemon every verb exits 1 naming the socket and how to start ferryd") {
  TestDomain domain;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"topic", "list"}, {"topic", "info", "t"}, {"topic", "echo", "t"},
        {"topic", "pub", "t", "{}"}, {"topic", "hz", "t"}, {"topic", "bw", "t"}, {"node", "list"},
        {"pool"}, {"top"}}) {
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_program(domain, argv);
    CAPTURE(args[0]);
    CAPTURE(args.size() > 1 ? args[1] : "");
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(domain.name() + ".sock") != std::string::npos);
    CHECK(r.err.find("ferryd --config") != std::string::npos);
    CHECK(r.err.rfind("ferry: ", 0) == 0);
  }
}

TEST_CASE("every verb has help with examples, and bad usage exits 2") {
  TestDomain domain;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"topic", "list"}, {"topic", "info"}, {"topic", "echo"}, {"topic", "pub"},
        {"topic", "hz"}, {"topic", "bw"}, {"node", "list"}, {"pool"}, {"top"}, {"config", "check"}}) {
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--help");
    const auto r = run_program(domain, argv);
    CAPTURE(args.back());
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Example") != std::string::npos);
  }
  const auto top_help = run_program(domain, {bin_path("ferry"), "--help"});
  CHECK(top_help.out.find("Exit codes") != std::string::npos);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"topic", "pub", "t"}, {"topic", "hz", "t", "--window", "1"},
        {"topic", "pub", "t", "{}", "--rate", "0"}, {"topic", "echo"}, {"node"}, {"pool", "extra"},
        {"top", "--count", "x"}}) {
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    CAPTURE(args.back());
    CHECK(run_program(domain, argv).exit_code == 2);
  }
}
