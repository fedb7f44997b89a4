// docs/operations/ferryd.md: SIGHUP re-reads the YAML. New types and topics are added and
// new limits apply to new ports; a change that conflicts with live ports,
// and a file that does not load, are refused with file:line:col in the log,
// and the old configuration stays.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using ferry::test::TestDomain;

namespace {

// ferryd --foreground with its stderr (its log) in a file the test reads.
class LoggedDaemon {
 public:
  LoggedDaemon(const TestDomain& domain, const std::string& config)
      : log_((domain.runtime_dir() / "ferryd.log").string()) {
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ferry::test::use_domain_env(domain);
      std::FILE* log = std::freopen(log_.c_str(), "w", stderr);
      if (log == nullptr) std::_Exit(127);
      const std::string ferryd = ferry::test::bin_path("ferryd");
      ::execl(ferryd.c_str(), ferryd.c_str(), "--config", config.c_str(), "--foreground",
              static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    REQUIRE(eventually([&] { return log().find("serving domain") != std::string::npos; }, 10s));
  }
  ~LoggedDaemon() {
    ::kill(pid_, SIGTERM);
    CHECK(ferry::test::wait_exit(pid_, 5s) == 0);  // SIGKILL after 5 s
    const auto report = ferry::test::sanitizer_report(log());
    CHECK_MESSAGE(!report, *report);
  }
  LoggedDaemon(const LoggedDaemon&) = delete;
  LoggedDaemon& operator=(const LoggedDaemon&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] std::string log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // SIGHUP; returns the log lines the reload wrote once it said how it ended.
  std::string reload() {
    const std::size_t before = log().size();
    REQUIRE(::kill(pid_, SIGHUP) == 0);
    std::string added;
    const bool ended = eventually(
        [&] {
          added = log().substr(before);
          return added.find("reload refused") != std::string::npos ||
                 added.find("configuration reloaded") != std::string::npos;
        },
        5s);
    CHECK(ended);
    return added;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

const std::string kV1 = seq_config("  - { name: a, type: Seq, capacity: 16 }\n", "strict: true\n");

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string written(const std::string& path, const std::string& text) {
  write(path, text);
  return path;
}

// A fresh domain served by a LoggedDaemon from a file, `config`, that a
// test rewrites before it asks for a reload(); this process's environment
// points at the domain.
struct ReloadableDomain {
  explicit ReloadableDomain(const std::string& yaml)
      : config(written((domain.runtime_dir() / "ferry.yaml").string(), yaml)),
        daemon(domain, config) {
    ferry::test::use_domain_env(domain);
  }
  TestDomain domain;
  std::string config;
  LoggedDaemon daemon;
};

// "" when a publisher on `topic` is made; else ferryd's refusal. Any other
// failure (ferryd unreachable, a broken node) fails the test: a refusal
// must be ferryd's, not the absence of an answer.
std::string publisher_refusal(ferry::Node& node, const std::string& topic) {
  try {
    auto pub = node.publisher<Seq>(topic);
    return "";
  } catch (const ferry::Error& e) {
    const std::string why = e.what();
    const bool refused = why.find("is not declared") != std::string::npos ||
                         why.find("max_publishers") != std::string::npos;
    CHECK_MESSAGE(refused, why);
    return why;
  }
}
bool publisher_allowed(ferry::Node& node, const std::string& topic) {
  return publisher_refusal(node, topic).empty();
}

}  // namespace

TEST_CASE("SIGHUP adds new types and topics, and new limits apply to new ports") {
  ReloadableDomain served(kV1);
  ferry::Node node{"n"};
  auto live = node.publisher<Seq>("a");
  CHECK_FALSE(publisher_allowed(node, "b"));  // strict: not declared yet

  // A new type too.
  std::string text = seq_config(
      "  - { name: a, type: Seq, capacity: 16, max_publishers: 1 }\n"
      "  - { name: b, type: Seq }\n"
      "  - { name: c, type: Extra }\n",
      "strict: true\n");
  text.replace(text.find("types:\n"), 7, "types:\n  Extra: { size: 32 }\n");
  write(served.config, text);
  const std::string log = served.daemon.reload();
  CHECK(log.find("configuration reloaded") != std::string::npos);
  CHECK(publisher_allowed(node, "b"));        // the new topic
  CHECK_FALSE(publisher_allowed(node, "a"));  // max_publishers 1 now, and `live` holds it
  (void)live.publish(make_seq(1, 1));         // the live port is untouched
}

TEST_CASE("SIGHUP refuses a change that conflicts with live ports, naming file:line:col") {
  ReloadableDomain served(kV1);
  ferry::Node node{"n"};
  auto live = node.publisher<Seq>("a");

  // a's capacity changes under its live port; b is new but comes with it.
  const std::string text = seq_config(
      "  - { name: b, type: Seq }\n  - { name: a, type: Seq, capacity: 32 }\n", "strict: true\n");
  write(served.config, text);
  const std::string log = served.daemon.reload();
  const std::size_t line = static_cast<std::size_t>(
      std::count(text.begin(), text.begin() + static_cast<long>(text.find("name: a")), '\n') + 1);
  CAPTURE(log);
  CHECK(std::regex_search(log, std::regex(served.config + ":" + std::to_string(line) +
                                          ":[0-9]+: topic 'a' has 1 live port")));
  CHECK(log.find("capacity 32") != std::string::npos);
  CHECK(log.find("reload refused, the old configuration stays") != std::string::npos);
  CHECK_FALSE(publisher_allowed(node, "b"));  // nothing of the refused file applied
}

TEST_CASE("SIGHUP keeps the old configuration when the file does not load") {
  ReloadableDomain served(kV1);
  write(served.config, "topics:\n  - { name: b, type: Nope }\n");
  const std::string log = served.daemon.reload();
  CAPTURE(log);
  CHECK(std::regex_search(log, std::regex(served.config + ":2:[0-9]+: ")));
  CHECK(log.find("reload refused, the old configuration stays") != std::string::npos);
  ferry::Node node{"n"};
  CHECK(publisher_allowed(node, "a"));
  CHECK_FALSE(publisher_allowed(node, "b"));
}

TEST_CASE("SIGHUP reads a large file on a thread of its own: ferryd answers meanwhile") {
  ReloadableDomain served(kV1);
  // Close to the node limit (config/include/ferry/config/limits.hpp): an
  // anchored list of 9,000 users aliased by 2 x 50 topics, ~900,000 nodes.
  std::string text = seq_config("", "strict: true\n");
  text += "  - name: a\n    type: Seq\n    capacity: 16\n    allow:\n      publish: &all\n";
  for (int i = 0; i < 9000; ++i)
    text += i == 0 ? std::string("        - root\n") : "        - user" + std::to_string(i) + "\n";
  text += "      subscribe: *all\n";
  for (int i = 0; i < 50; ++i) {
    text += "  - { name: t" + std::to_string(i) +
            ", type: Seq, allow: { publish: *all, subscribe: *all } }\n";
  }
  write(served.config, text);
  const std::size_t before = served.daemon.log().size();
  ferry::Node node{"n"};
  REQUIRE(::kill(served.daemon.pid(), SIGHUP) == 0);
  // While the file is read: each port request is answered at once.
  int answered_during = 0;
  std::chrono::milliseconds slowest{0};
  while (served.daemon.log().find("configuration reloaded", before) == std::string::npos &&
         served.daemon.log().find("reload refused", before) == std::string::npos) {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(publisher_allowed(node, "a"));
    slowest = std::max(slowest, std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - t0));
    ++answered_during;
    REQUIRE(answered_during < 100000);
  }
  const std::string log = served.daemon.log().substr(before);
  CHECK(log.find("configuration reloaded") != std::string::npos);
  MESSAGE(answered_during << " port requests answered while the file was read, the slowest in "
                          << slowest.count() << " ms");
  // Read on the loop, the file would hold every request until it is read
  // (about one answered meanwhile); read aside, they go on.
  CHECK(answered_during >= 10);
  CHECK(publisher_allowed(node, "t49"));
}

namespace {

// "" when a subscriber on `topic` is made; else ferryd's refusal.
std::string subscriber_refusal(ferry::Node& node, const std::string& topic) {
  try {
    auto sub = node.subscriber<Seq>(topic);
    return "";
  } catch (const ferry::Error& e) {
    return e.what();
  }
}

// A YAML flow list of `n` user names nobody has, then `last` if not empty.
std::string names(int n, const std::string& last) {
  std::string list = "[";
  for (int i = 0; i < n; ++i) list += "absent" + std::to_string(i) + ", ";
  list += last.empty() ? "absent-last" : last;
  return list + "]";
}

}  // namespace

TEST_CASE(
    "allow: lists of 9,000 names cost a port request nothing, SIGHUP changes them for new "
    "ports, and a topic dropped from the file stays while ports use it") {
  const std::string me = std::to_string(::getuid());
  // This process may publish on g (the last of 9,000 names), not subscribe.
  ReloadableDomain served(seq_config(
      "  - { name: g, type: Seq, max_publishers: 16, allow: { publish: " + names(9000, me) +
          ", subscribe: " + names(9000, "") +
          " } }\n"
          "  - { name: d, type: Seq }\n",
      "strict: true\n"));
  ferry::Node node{"n"};

  // Each request used to look all 9,000 names up in the user database on
  // ferryd's runtime thread (seconds per request).
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<ferry::Publisher<Seq>> pubs;
  for (int i = 0; i < 10; ++i) pubs.push_back(node.publisher<Seq>("g"));
  for (int i = 0; i < 10; ++i) {
    CHECK(subscriber_refusal(node, "g").find("may not subscribe to topic 'g'") !=
          std::string::npos);
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  MESSAGE("20 port requests on a topic with 2 x 9,001 allowed names took "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took < 2s);

  auto dropped_pub = std::make_optional(node.publisher<Seq>("d"));
  auto dropped_sub = std::make_optional(node.subscriber<Seq>("d"));
  REQUIRE(eventually([&] { return dropped_pub->subscriber_count() == 1; }));

  // Now the other way round, and d is gone from the file.
  write(served.config,
        seq_config("  - { name: g, type: Seq, allow: { publish: [absent1], subscribe: " +
                       names(9000, me) + " } }\n",
                   "strict: true\n"));
  CHECK(served.daemon.reload().find("configuration reloaded") != std::string::npos);
  auto allowed_sub = node.subscriber<Seq>("g");
  try {
    auto refused = node.publisher<Seq>("g");
    FAIL("a publisher on g was admitted after the reload removed this uid");
  } catch (const ferry::Error& e) {
    CHECK(std::string(e.what()).find("may not publish on topic 'g'") != std::string::npos);
  }
  // Ports made before keep going.
  REQUIRE(eventually([&] { return pubs.front().subscriber_count() == 1; }));
  CHECK(pubs.front().publish(make_seq(1, 1)).delivered == 1);
  CHECK(allowed_sub.take(2s));

  // d's live ports go on, and another port may join them while they live.
  CHECK(dropped_pub->publish(make_seq(1, 2)).delivered == 1);
  {
    auto taken = dropped_sub->take(2s);
    REQUIRE(taken);
    CHECK((*taken)->seq == 2);
  }
  CHECK(subscriber_refusal(node, "d").empty());
  // Its last port gone, it goes: strict refuses it from then on.
  dropped_pub.reset();
  dropped_sub.reset();
  CHECK(eventually(
      [&] { return subscriber_refusal(node, "d").find("not declared") != std::string::npos; }, 5s));
}
