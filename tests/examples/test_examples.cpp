// The control, fan_in and bytes examples as a user runs them: a real ferryd
// serving the example's own YAML file (in a fresh test domain, which
// overrides the file's `domain:`), and the example programs as processes.
// What is checked is what each example promises its reader.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "log_line.hpp"
#include "test_domain.hpp"
#include "text_lines.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

// examples/NAME/NAME.yaml, as docs/examples.md has ferryd load it.
std::string example_yaml(const std::string& name) {
  std::ifstream in(std::string(FERRY_EXAMPLES_DIR) + "/" + name + "/" + name + ".yaml");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

}  // namespace

TEST_CASE(
    "control: a slow follower makes publish time out; the controller slows down, exits 0, "
    "and the follower gets the commands in order") {
  TestDomain domain;
  Daemon daemon(domain, example_yaml("control"));
  Background follower(domain, {bin_path("control_follower"), "--slow-ms", "50"});
  // 100 Hz against a follower that needs 50 ms a command, through a queue of
  // 4 and a block timeout of 20 ms: the queue fills within a few commands.
  const auto pub = run_program(domain, {bin_path("control_publisher"), "30", "100"}, 20s);
  CAPTURE(pub.out);
  CAPTURE(pub.err);
  CHECK(pub.exit_code == 0);
  REQUIRE(follower.wait() == 0);
  CAPTURE(follower.out());

  CHECK(pub.out.find(
            "timed out at 1 follower(s) after block_timeout_ms: dropping from 100 Hz to the safe "
            "rate 10 Hz") != std::string::npos);
  unsigned long long sent = 0, delivered = 0, timed_out = 0;
  const auto summary = pub.out.find("sent ");
  REQUIRE(summary != std::string::npos);
  REQUIRE(std::sscanf(pub.out.c_str() + summary,
                      "sent %llu command(s): %llu delivered, %llu timed out", &sent, &delivered,
                      &timed_out) == 3);
  CHECK(sent == 30);
  CHECK(timed_out > 0);
  CHECK(delivered + timed_out == 30);

  // Strictly increasing sequence numbers, one per delivered command, ending
  // with the stop command (the last one).
  std::vector<unsigned long long> seqs;
  for (const auto& line : lines_of(follower.out())) {
    unsigned long long seq = 0;
    if (std::sscanf(line.c_str(), "follower: command %llu", &seq) == 1) seqs.push_back(seq);
  }
  REQUIRE(seqs.size() == delivered);
  for (std::size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i - 1] < seqs[i]);
  CHECK(seqs.back() == 29);
  CHECK(follower.out().find("skipped: timed out at the controller") != std::string::npos);
  CHECK(follower.out().find("follower: stopped after " + std::to_string(delivered) +
                            " command(s) in order, " + std::to_string(timed_out) + " skipped") !=
        std::string::npos);
  CHECK(follower.err().empty());
}

TEST_CASE(
    "fusion: an Executor node and a Boost.Asio node each get every command in order, poses, "
    "images, ticks") {
  TestDomain domain;
  Daemon daemon(domain, example_yaml("fusion"));
  Background node(domain, {bin_path("fusion_node")});
  Background asio(domain, {bin_path("fusion_asio")});
  const auto sensors = run_program(domain, {bin_path("fusion_sensors"), "1", "2"}, 20s);
  CAPTURE(sensors.err);
  REQUIRE(sensors.exit_code == 0);
  CHECK(sensors.out == "fusion_sensors: 100 poses, 6 commands (the last one stop)\n");
  REQUIRE(node.wait() == 0);
  REQUIRE(asio.wait() == 0);
  CAPTURE(node.out());
  CAPTURE(asio.out());
  unsigned long long poses = 0, commands = 0, images = 0, ticks = 0, missed = 0;
  REQUIRE(std::sscanf(node.out().c_str(),
                      "fusion_node: %llu poses, %llu commands in order, %llu images, %llu control "
                      "ticks (%llu missed)",
                      &poses, &commands, &images, &ticks, &missed) == 5);
  CHECK(commands == 6);
  CHECK(poses > 50);
  CHECK(images > 5);
  CHECK(ticks >= 40);  // 50 Hz for the second the sensors publish, and more
  REQUIRE(std::sscanf(asio.out().c_str(),
                      "fusion_asio: %llu poses, %llu commands in order, %llu images, %llu", &poses,
                      &commands, &images, &ticks) == 4);
  CHECK(commands == 6);
  CHECK(poses > 50);
  CHECK(images > 5);
  CHECK(ticks >= 40);
}

TEST_CASE("fan_in: the subscriber gets every tick of both publishers, each publisher's in order") {
  TestDomain domain;
  Daemon daemon(domain, example_yaml("fan_in"));
  constexpr unsigned long long kTicks = 300;
  const std::string ticks = std::to_string(kTicks);
  Background sub(domain, {bin_path("fan_in_subscriber"), "2", ticks});
  Background one(domain, {bin_path("fan_in_publisher"), "1", ticks, "1000"});
  Background two(domain, {bin_path("fan_in_publisher"), "2", ticks, "1000"});
  CHECK(one.wait() == 0);
  CHECK(two.wait() == 0);
  REQUIRE(sub.wait() == 0);
  CAPTURE(sub.err());

  std::map<unsigned long long, std::vector<unsigned long long>> by_publisher;
  for (const auto& line : lines_of(sub.out())) {
    unsigned long long id = 0, seq = 0;
    if (std::sscanf(line.c_str(), "subscriber: publisher %llu tick %llu", &id, &seq) == 2) {
      by_publisher[id].push_back(seq);
    }
  }
  REQUIRE(by_publisher.size() == 2);
  for (const auto& [id, seqs] : by_publisher) {
    CAPTURE(id);
    REQUIRE(seqs.size() == kTicks);
    for (unsigned long long i = 0; i < kTicks; ++i) CHECK(seqs[i] == i);
    CHECK(sub.out().find("subscriber: publisher " + std::to_string(id) + ": " + ticks +
                         " tick(s), in order") != std::string::npos);
  }
  CHECK(one.out() == "fan_in_publisher_1: published " + ticks + " tick(s)\n");
}

TEST_CASE(
    "fan_in: two publishers with the same ID break the order; the subscriber says so and exits 1") {
  TestDomain domain;
  Daemon daemon(domain, example_yaml("fan_in"));
  Background sub(domain, {bin_path("fan_in_subscriber"), "2", "50"});
  Background one(domain, {bin_path("fan_in_publisher"), "1", "50", "200"});
  Background again(domain, {bin_path("fan_in_publisher"), "1", "50", "200"});
  CHECK(sub.wait() == 1);
  CAPTURE(sub.err());
  CHECK(one_line(sub.err()));
  CHECK(sub.err().rfind("fan_in_subscriber: publisher 1 sent tick ", 0) == 0);
  CHECK(sub.err().find("reordered or duplicated") != std::string::npos);
  // The publishers end on their own: done (0), or told that the subscriber
  // left (1, in one line); a signal or a hang is a failure.
  for (Background* publisher : {&one, &again}) {
    const int code = publisher->wait();
    CAPTURE(code);
    CAPTURE(publisher->err());
    CHECK((code == 0 || code == 1));
    if (code == 1) {
      CHECK(one_line(publisher->err()));
      CHECK(publisher->err().rfind("fan_in_publisher: ", 0) == 0);
    }
  }
}

TEST_CASE("bytes: log_tail receives every line, up to max_size, with its exact size and content") {
  TestDomain domain;
  Daemon daemon(domain, example_yaml("bytes"));
  constexpr std::uint64_t kLines = 27;  // three rounds of the sizes, 48 B to 64 KiB
  Background tail(domain, {bin_path("log_tail"), std::to_string(kLines), "--full"});
  const auto pub =
      run_program(domain, {bin_path("log_publisher"), std::to_string(kLines), "200"}, 20s);
  CAPTURE(pub.err);
  CHECK(pub.exit_code == 0);
  REQUIRE(tail.wait() == 0);

  const auto lines = lines_of(tail.out());
  REQUIRE(lines.size() == kLines);
  std::uint64_t bytes = 0;
  for (std::uint64_t i = 0; i < kLines; ++i) {
    CAPTURE(i);
    const std::string expected = log_line(i);
    bytes += expected.size();
    CHECK(lines[i].size() == expected.size());
    CHECK((lines[i] == expected));  // not decomposed: the lines are long
  }
  CHECK(log_line(8).size() == kMaxLine);
  CHECK(tail.err() == "log_tail: received 27 line(s), " + std::to_string(bytes) + " bytes\n");
  CHECK(pub.out == "log_publisher: published 27 line(s), " + std::to_string(bytes) + " bytes\n");
}

TEST_CASE("every example program fails in one line: exit 1 without ferryd, 2 on a bad argument") {
  TestDomain domain;  // no daemon
  for (const char* program : {"control_publisher", "control_follower", "fan_in_publisher",
                              "fan_in_subscriber", "log_publisher", "log_tail"}) {
    CAPTURE(program);
    const std::vector<std::string> argv{bin_path(program)};
    const auto r = run_program(domain,
                               std::string(program) == "fan_in_publisher"
                                   ? std::vector<std::string>{bin_path(program), "1"}
                                   : argv,
                               10s);
    CHECK(r.exit_code == 1);
    CHECK(one_line(r.err));
    CHECK(r.err.rfind(std::string(program) + ": ", 0) == 0);
    CHECK(r.err.find("ferryd --config") != std::string::npos);

    const auto bad = run_program(domain, {bin_path(program), "x"}, 10s);
    CHECK(bad.exit_code == 2);
    CHECK(one_line(bad.err));
    CHECK(bad.err.find("usage: " + std::string(program)) != std::string::npos);
  }
}

TEST_CASE("hello and camera programs refuse a bad argument in one line with exit 2") {
  TestDomain domain;  // no daemon: a bad argument is refused before any connection
  for (const char* program : {"hello_publisher", "hello_subscriber", "camera_publisher",
                              "camera_viewer", "c_publisher", "c_subscriber"}) {
    CAPTURE(program);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"x"}, {"-5"}, {"1", "2", "3"}}) {
      std::vector<std::string> argv{bin_path(program)};
      argv.insert(argv.end(), args.begin(), args.end());
      const auto bad = run_program(domain, argv, 10s);
      CAPTURE(bad.err);
      CHECK(bad.exit_code == 2);
      CHECK(one_line(bad.err));
      CHECK(bad.err.find("usage: " + std::string(program)) != std::string::npos);
    }
  }
}

TEST_CASE("c: the hello example in C talks to itself and to the C++ hello programs") {
  TestDomain domain;
  Daemon daemon(domain, example_yaml("hello"));
  // C to C, C to C++, C++ to C: the same topic and type, whatever the language.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"c_publisher", "c_subscriber"},
      {"c_publisher", "hello_subscriber"},
      {"hello_publisher", "c_subscriber"}};
  for (const auto& [publisher, subscriber] : pairs) {
    CAPTURE(publisher);
    CAPTURE(subscriber);
    Background sub(domain, {bin_path(subscriber), "10"});
    const auto pub = run_program(domain, {bin_path(publisher), "10", "100"}, 20s);
    CAPTURE(pub.out);
    CAPTURE(pub.err);
    CHECK(pub.exit_code == 0);
    CHECK(pub.out.find("publisher: 1 subscriber(s) matched") != std::string::npos);
    CHECK(pub.out.find("publisher: sample 9 delivered to 1 queue(s)") != std::string::npos);
    REQUIRE(sub.wait() == 0);
    CAPTURE(sub.out());
    CHECK(sub.out().find("subscriber: received 10 sample(s)") != std::string::npos);
    CHECK(sub.out().find("frame=map") != std::string::npos);
  }
}
