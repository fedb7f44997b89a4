// The live verbs against a real ferryd: hz and bw of a publisher running at a
// known rate, `ferry top` on a pseudo-terminal, node list before and after a
// node dies, pool, and every verb's help and exit codes.
#include <doctest/doctest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "json_lines.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"
#include "text_lines.hpp"

using namespace ferry::test;
using nlohmann::json;

namespace {

constexpr double kRate = 50;  // Hz
// How far a measured rate may be from kRate: the metronome below catches up
// after its process was descheduled with a short burst, which a window of a
// second or two sees as up to ~12% more on a loaded 2-core machine (55.9 Hz
// was seen). A wrong window, unit or count is off by far more.
constexpr double kRateTolerance = 0.15;

// A child publishing Seq samples on `topic` at kRate for `seconds`.
Child publisher_at_rate(const std::string& topic, double seconds) {
  return Child([topic, seconds] {
    ferry::Node node{"metronome"};
    auto pub = node.publisher<Seq>(topic);
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / kRate));
    const auto start = std::chrono::steady_clock::now();
    auto next = start;
    for (std::uint64_t i = 0;
         std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds); ++i) {
      (void)pub.publish(make_seq(1, i));
      next += period;
      std::this_thread::sleep_until(next);
    }
    return 0;
  });
}

// "3.12 KiB" (two words of `ferry topic bw`) in bytes.
double bytes_of(const std::string& number, const std::string& unit) {
  const double value = std::stod(number);
  double scale = 1;
  for (const char* u : {"B", "KiB", "MiB", "GiB"}) {
    if (unit == u || unit == std::string(u) + "/s") return value * scale;
    scale *= 1024;
  }
  FAIL("not a size unit: " << unit);
  return 0;
}

// What a program drew on the terminal, as the lines a user sees: control
// sequences (ESC [ ... final byte) and carriage returns removed.
std::vector<std::string> screen_lines(const std::string& screen) {
  std::string plain;
  for (std::size_t i = 0; i < screen.size(); ++i) {
    if (screen[i] == '\x1b' && i + 1 < screen.size() && screen[i + 1] == '[') {
      i += 2;
      while (i < screen.size() && !(screen[i] >= '@' && screen[i] <= '~')) ++i;
      continue;
    }
    if (screen[i] != '\r') plain += screen[i];
  }
  return ferry::test::lines_of(plain);
}

const json* find_named(const json& array, const std::string& name) {
  for (const auto& item : array) {
    if (item["name"] == name) return &item;
  }
  return nullptr;
}

}  // namespace

// A topic name longer than the TOPIC column of an 80-column `top` can hold.
const std::string kLongTopic = "a/topic/name/much/longer/than/the/top/column/allows";

TEST_CASE("hz, bw, topic list and top measure a publisher running at 50 Hz") {
  ServedConfig served(
      seq_config("  - { name: rate, type: Seq, capacity: 64 }\n"
                 "  - { name: " +
                 kLongTopic + ", type: Seq }\n"));
  // Every tool runs past the table and top checks below (4 subscribers),
  // with room for a sanitizer build's slower start; the metronome outlives them.
  Child metronome = publisher_at_rate("rate", 6.0);
  Background hz(served.domain, {bin_path("ferry"), "topic", "hz", "rate", "--window", "100",
                                "--duration", "4.2", "--json"});
  Background bw(served.domain,
                {bin_path("ferry"), "topic", "bw", "rate", "--duration", "3.5", "--json"});
  Background hz_text(served.domain,
                     {bin_path("ferry"), "topic", "hz", "rate", "--duration", "3.5"});
  Background bw_text(served.domain,
                     {bin_path("ferry"), "topic", "bw", "rate", "--duration", "3.5"});

  // While they subscribe, the rings count what is published.
  REQUIRE(eventually([&] {
    const json topics = ferry_json(served.domain, {"topic", "list"});
    const json* t = find_named(topics, "rate");
    return t != nullptr && (*t)["observers"] == 4 && (*t)["publishers"] == 1;  // hz and bw observe
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const json* listed = nullptr;
  const json list = ferry_json(served.domain, {"topic", "list"});
  listed = find_named(list, "rate");
  REQUIRE(listed != nullptr);
  REQUIRE((*listed)["rate_hz"].is_number());
  CHECK((*listed)["rate_hz"].get<double>() == doctest::Approx(kRate).epsilon(kRateTolerance));

  // The same as a table: the header, then the row's values under it.
  const auto table = run_program(served.domain, {bin_path("ferry"), "topic", "list"});
  REQUIRE(table.exit_code == 0);
  CHECK(
      words_of(table.out.substr(0, table.out.find('\n'))) ==
      std::vector<std::string>{"TOPIC", "TYPE", "POLICY", "CAPACITY", "PUBS", "SUBS", "RATE(Hz)"});
  const auto row = last_line_words(table.out, "rate ");
  REQUIRE(row.size() == 7);
  CHECK(row[1] == "Seq");
  CHECK(row[2] == "drop_oldest");  // the default policy
  CHECK(row[3] == "64");
  CHECK(row[4] == "1");
  CHECK(row[5] == "0");  // hz and bw observe: not subscribers
  CHECK(std::stod(row[6]) == doctest::Approx(kRate).epsilon(kRateTolerance));
  // A topic without a subscriber has no queue, hence no rate.
  CHECK(last_line_words(table.out, kLongTopic) ==
        std::vector<std::string>{kLongTopic, "Seq", "drop_oldest", "64", "0", "0", "-"});

  {
    OnTerminal top(served.domain, {bin_path("ferry"), "top"});
    REQUIRE(top.started());
    for (const char* header : {"RATE/s", "BW/s", "BACKLOG", "DROPPED", "OVERWR", "TIMEOUT"}) {
      CAPTURE(header);
      CHECK(top.shows(header));
    }
    CHECK(top.shows("rate "));
    CHECK(top.shows("1/0"));  // one publisher; hz and bw observe, they are not subscribers
    // Clipped to the room an 80-column line leaves: 80 - 56 fixed - 1 spare.
    CHECK(top.shows(kLongTopic.substr(0, 22) + "~ "));
    top.type("q");
    CHECK(top.wait() == 0);
    CHECK(top.screen().find("\x1b[?1049h") != std::string::npos);  // drew full screen...
    CHECK(top.screen().find("\x1b[?1049l") != std::string::npos);  // ... and restored the terminal
    std::size_t header_lines = 0;
    for (const auto& line : screen_lines(top.screen())) {
      CAPTURE(line);
      CHECK(line.size() <= 80);
      if (line.rfind("TOPIC", 0) == 0) {
        ++header_lines;
        // Every column fits: none was clipped away at the right edge.
        CHECK(words_of(line) == std::vector<std::string>{"TOPIC", "P/S", "RATE/s", "BW/s",
                                                         "BACKLOG", "DROPPED", "OVERWR",
                                                         "TIMEOUT"});
      }
    }
    CHECK(header_lines >= 1);
  }

  REQUIRE(hz.wait() == 0);
  const auto reports = json_lines(hz.out());
  REQUIRE(reports.size() >= 3);
  const json& last = reports.back();
  CHECK(last["rate_hz"].get<double>() == doctest::Approx(kRate).epsilon(kRateTolerance));
  CHECK(last["window"].get<int>() >= 100);
  CHECK(last["min_s"].get<double>() <= last["max_s"].get<double>());
  CHECK(last["std_dev_s"].get<double>() < 0.02);
  CHECK(hz.err().empty());

  REQUIRE(bw.wait() == 0);
  const json b = json_lines(bw.out()).back();
  CHECK(b["bytes_per_s"].get<double>() == doctest::Approx(kRate * 64).epsilon(kRateTolerance));
  CHECK(b["mean_size"] == 64.0);
  CHECK(b["max_size"] == 64);

  // Without --json: "bandwidth: 3.12 KiB/s from N samples" then
  // "\tmean: 64 B min: 64 B max: 64 B window: N", once a second.
  REQUIRE(bw_text.wait() == 0);
  const std::string bw_out = bw_text.out();
  CHECK(bw_out.rfind("bandwidth: ", 0) == 0);
  const auto rate_words = last_line_words(bw_out, "bandwidth: ");
  REQUIRE(rate_words.size() == 6);
  CHECK(rate_words[3] == "from");
  CHECK(rate_words[5] == "samples");
  CHECK(bytes_of(rate_words[1], rate_words[2]) ==
        doctest::Approx(kRate * 64).epsilon(kRateTolerance));
  CHECK(std::stoul(rate_words[4]) >= 50);  // about 3 s of samples in the window
  const auto size_words = last_line_words(bw_out, "\tmean: ");
  REQUIRE(size_words.size() == 11);
  CHECK(bytes_of(size_words[1], size_words[2]) == 64);
  CHECK(bytes_of(size_words[4], size_words[5]) == 64);
  CHECK(bytes_of(size_words[7], size_words[8]) == 64);
  CHECK(size_words[10] == rate_words[4]);
  CHECK(bw_text.err().empty());

  REQUIRE(hz_text.wait() == 0);
  CHECK(hz_text.out().find("average rate: ") == 0);
  CHECK(hz_text.out().find("std dev: ") != std::string::npos);
  CHECK(metronome.wait() == 0);
}

TEST_CASE("topic delay reports the publish-to-take delay of a 50 Hz publisher every second") {
  ServedConfig served(seq_config("  - { name: rate, type: Seq, capacity: 64 }\n"));
  Child metronome = publisher_at_rate("rate", 5.0);
  Background json_out(served.domain,
                      {bin_path("ferry"), "topic", "delay", "rate", "--duration", "3.5", "--json"});
  Background text(served.domain, {bin_path("ferry"), "topic", "delay", "rate", "--window", "2",
                                  "--duration", "2.5"});
  REQUIRE(json_out.wait() == 0);
  const auto reports = json_lines(json_out.out());
  REQUIRE(reports.size() >= 3);
  // The last full second: about 50 samples, each taken well within a
  // second of its publish (an unset or wrong publish time would be years off).
  const json& last = reports.back();
  CHECK(last["count"].get<double>() == doctest::Approx(kRate).epsilon(0.2));
  CHECK(last["window_s"].get<double>() == 1.0);
  CHECK(last["samples"].get<int>() >= 100);
  const double p50 = last["p50_ms"].get<double>();
  const double p90 = last["p90_ms"].get<double>();
  const double max = last["max_ms"].get<double>();
  CHECK(last["min_ms"].get<double>() >= 0);
  CHECK(p50 <= p90);
  CHECK(p90 <= max);
  CHECK(max < 1000);
  REQUIRE(text.wait() == 0);
  const auto row = last_line_words(text.out(), "delay p50:");
  REQUIRE(row.size() == 17);  // delay p50: X ms p90: X ms max: X ms (N samples in the last 2 s)
  CHECK(row[3] == "ms");
  CHECK(std::stod(row[2]) >= 0);
  CHECK(std::stod(row[8]) < 1000);
  CHECK(std::stoi(row[10].substr(1)) == doctest::Approx(2 * kRate).epsilon(0.2));
  CHECK(metronome.wait() == 0);
}

TEST_CASE("top prints plain tables when stdout is not a terminal") {
  ServedConfig served(
      seq_config("  - { name: robot/pose, type: Seq, policy: drop_new, capacity: 2 }\n"));
  ferry::Node node{"tester"};
  auto [pub, sub] = matched_ports<Seq>(node, "robot/pose");
  for (std::uint64_t i = 0; i < 5; ++i) (void)pub.publish(make_seq(1, i));
  const auto r = run_program(served.domain, {bin_path("ferry"), "top", "--count", "2"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
  const auto first = r.out.find("ferry top - domain " + served.domain.name());
  REQUIRE(first != std::string::npos);
  CHECK(r.out.find("ferry top - domain", first + 1) != std::string::npos);  // two tables
  std::istringstream lines(r.out);
  bool row = false;
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 80);
    if (line.rfind("robot/pose", 0) == 0) {
      row = true;
      const auto w = words_of(line);
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
  ServedConfig served(seq_config("  - { name: a, type: Seq }\n  - { name: b, type: Seq }\n"));
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

  const json nodes = ferry_json(served.domain, {"node", "list"});
  REQUIRE(nodes.size() == 2);  // the asking ferry itself is not listed
  const json* v = find_named(nodes, "victim");
  REQUIRE(v != nullptr);
  CHECK((*v)["pid"] == victim.pid());
  CHECK((*v)["publishers"] == 1);
  CHECK((*v)["subscribers"] == 1);
  CHECK((*v)["heartbeat_age_ms"].is_number_unsigned());
  CHECK((*v)["connected_ms"].is_number_unsigned());
  REQUIRE((*v)["ports"].size() == 2);
  CHECK((*v)["ports"][0] ==
        json{{"port_id", (*v)["ports"][0]["port_id"]}, {"topic", "a"}, {"direction", "publish"}});
  CHECK((*v)["ports"][1]["topic"] == "b");
  const json* s = find_named(nodes, "survivor");
  REQUIRE(s != nullptr);
  CHECK((*s)["pid"] == ::getpid());
  CHECK((*s)["subscribers"] == 1);

  const auto text = run_program(served.domain, {bin_path("ferry"), "node", "list"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("NODE") == 0);
  CHECK(text.out.find("victim    " + std::to_string(victim.pid())) != std::string::npos);
  CHECK(text.out.find("pub a, sub b") != std::string::npos);

  victim.kill(SIGKILL);
  CHECK(victim.wait() == 128 + SIGKILL);
  CHECK(eventually([&] {
    const json after = ferry_json(served.domain, {"node", "list"});
    return after.size() == 1 && find_named(after, "survivor") != nullptr;
  }));
  CHECK(eventually([&] { return sub.publisher_count() == 0; }));
}

TEST_CASE("pool shows every size class with its chunks accounted for") {
  TestDomain domain;
  // A declared pool: the classes and their counts are known exactly.
  Daemon daemon(domain, seq_config("  - { name: t, type: Seq }\n"
                                   "  - { name: logs, type: bytes, max_size: 4KiB }\n",
                                   "pool:\n"
                                   "  - { chunk_size: 4KiB, count: 16 }\n"
                                   "  - { chunk_size: 64KiB, count: 4 }\n"));
  const json pool = ferry_json(domain, {"pool"});
  CAPTURE(ferry::test::json_text(pool));
  REQUIRE(pool["classes"].is_array());
  REQUIRE(pool["classes"].size() == 2);
  const std::uint64_t sizes[] = {4096, 65536};
  const std::uint64_t counts[] = {16, 4};
  for (std::size_t i = 0; i < 2; ++i) {
    const json& c = pool["classes"][i];
    CHECK(c["chunk_size"] == sizes[i]);
    CHECK(c["total"] == counts[i]);
    CHECK(c["free"] == counts[i]);  // nothing runs: every chunk is free
    CHECK(c["loaned"] == 0);
    CHECK(c["in_flight"] == 0);
  }
  const auto text = run_program(domain, {bin_path("ferry"), "pool"});
  CHECK(text.exit_code == 0);
  CAPTURE(text.out);
  CHECK(last_line_words(text.out, "CHUNK") == std::vector<std::string>{"CHUNK", "TOTAL", "FREE",
                                                                       "LOANED", "IN_FLIGHT",
                                                                       "LOW_WATER", "EXHAUSTED"});
  CHECK(last_line_words(text.out, "4.00 KiB") ==
        std::vector<std::string>{"4.00", "KiB", "16", "16", "0", "0", "16", "0"});
  CHECK(last_line_words(text.out, "64.0 KiB") ==
        std::vector<std::string>{"64.0", "KiB", "4", "4", "0", "0", "4", "0"});
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
  for (const std::vector<std::string>& args : {std::vector<std::string>{"topic", "list"},
                                               {"topic", "info", "t"},
                                               {"topic", "echo", "t"},
                                               {"topic", "pub", "t", "{}"},
                                               {"topic", "hz", "t"},
                                               {"topic", "bw", "t"},
                                               {"node", "list"},
                                               {"pool"},
                                               {"top"}}) {
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
  for (const std::vector<std::string>& args : {std::vector<std::string>{"topic", "list"},
                                               {"topic", "info"},
                                               {"topic", "echo"},
                                               {"topic", "pub"},
                                               {"topic", "hz"},
                                               {"topic", "bw"},
                                               {"topic", "delay"},
                                               {"node", "list"},
                                               {"pool"},
                                               {"top"},
                                               {"config", "check"}}) {
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--help");
    const auto r = run_program(domain, argv);
    CAPTURE(args.back());
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Example") != std::string::npos);
    CHECK(r.out.find("--domain") !=
          std::string::npos);  // the global flag is taken after the verb too
  }
  const auto top_help = run_program(domain, {bin_path("ferry"), "--help"});
  CHECK(top_help.out.find("Exit codes") != std::string::npos);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"topic", "pub", "t"},
                                               {"topic", "hz", "t", "--window", "1"},
                                               {"topic", "delay", "t", "--window", "0"},
                                               {"topic", "pub", "t", "{}", "--rate", "0"},
                                               {"topic", "echo"},
                                               {"node"},
                                               {"pool", "extra"},
                                               {"top", "--count", "x"}}) {
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    CAPTURE(args.back());
    CHECK(run_program(domain, argv).exit_code == 2);
  }
}

TEST_CASE("topic pub waits for a subscriber that appears after it started") {
  ServedConfig served(seq_config("  - { name: late, type: Seq }\n"));
  Background pub(served.domain,
                 {bin_path("ferry"), "topic", "pub", "late", "{publisher: 7, seq: 42}"});
  // Its publisher is up, with no subscriber: without the wait the sample
  // would go nowhere (no history on this topic).
  REQUIRE(eventually([&] {
    const json t = ferry_json(served.domain, {"topic", "info", "late"});
    return t["publishers"].size() == 1;
  }));
  CHECK(ferry_json(served.domain, {"topic", "info", "late"})["subscribers"].empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ferry::Node node{"latecomer"};
  auto sub = node.subscriber<Seq>("late");
  const auto sample = sub.take(std::chrono::seconds(5));
  REQUIRE(sample.has_value());
  CHECK((*sample)->publisher == 7);
  CHECK((*sample)->seq == 42);
  CHECK(pub.wait() == 0);
  CHECK(pub.out().find("published 1 sample(s) on 'late': 1 delivered") != std::string::npos);
}

TEST_CASE("topic pub waits for every subscriber ferryd reports, or for --wait-subscribers N") {
  ServedConfig served(seq_config("  - { name: both, type: Seq }\n"));
  ferry::Node node{"two-readers"};
  auto first = node.subscriber<Seq>("both");
  auto second = node.subscriber<Seq>("both");
  // By default: both queues attached before the one sample goes out.
  const auto all =
      run_program(served.domain, {bin_path("ferry"), "topic", "pub", "both", "{seq: 1}"});
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.find("published 1 sample(s) on 'both': 2 delivered") != std::string::npos);
  CHECK(first.take(std::chrono::seconds(5)).has_value());
  CHECK(second.take(std::chrono::seconds(5)).has_value());
  // Three asked for, two there: it waits its 2 s, then publishes to those two.
  const auto started = std::chrono::steady_clock::now();
  const auto three = run_program(served.domain, {bin_path("ferry"), "topic", "pub", "both",
                                                 "{seq: 2}", "--wait-subscribers", "3"});
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(1900));
  REQUIRE(three.exit_code == 0);
  CHECK(three.out.find("published 1 sample(s) on 'both': 2 delivered") != std::string::npos);
}

TEST_CASE(
    "topic echo shows a bytes topic's samples as their size and a hex prefix, as YAML and JSON") {
  ServedConfig served("topics:\n  - { name: raw, type: bytes, max_size: 48 }\n");
  ferry::Node node{"raw-writer"};
  auto pub = node.publisher<ferry::Bytes>("raw");
  Background text(served.domain, {bin_path("ferry"), "topic", "echo", "raw", "--count", "1"});
  Background js(served.domain,
                {bin_path("ferry"), "topic", "echo", "raw", "--count", "1", "--json"});
  REQUIRE(eventually([&] { return pub.observer_count() == 2; }));  // the echoes observe
  std::vector<std::byte> payload(40);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(0xA0 + i);
  CHECK(pub.publish(std::span<const std::byte>(payload)).delivered ==
        0);  // observers are not counted

  REQUIRE(js.wait() == 0);
  const json v = ferry::test::parse_json(js.out());
  CHECK(v["size"] == 40);
  CHECK(v["hex"].get<std::string>().substr(0, 8) == "a0a1a2a3");
  CHECK(v["hex"].get<std::string>().size() == 64);  // the first 32 bytes

  REQUIRE(text.wait() == 0);
  const std::string out = text.out();
  CHECK(out.find("size: 40\n") != std::string::npos);
  CHECK(out.find("hex: \"a0a1a2a3") != std::string::npos);
  CHECK(out.substr(out.size() - 4) == "---\n");
  CHECK(text.err().empty());
}
