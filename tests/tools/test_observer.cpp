// Observer subscriptions (issue 21): inspecting a topic never changes how it
// runs. A stopped `ferry topic echo` on a block topic does not hold the
// publisher, the inspecting verbs attach to a topic at max_subscribers, and
// an observer killed while holding pooled samples leaves the pool whole.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <utility>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "json_text.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;
using nlohmann::json;

namespace {

// Long enough that a stopped echo is not declared dead (and removed) while
// the test looks at it.
const std::string kLiveness = "liveness: { heartbeat_ms: 100, timeout_ms: 30000 }\n";

// The observers `ferry topic info --json` lists on `topic`.
std::size_t observer_count(const TestDomain& domain, const std::string& topic) {
  return ferry_json(domain, {"topic", "info", topic})["observers"].size();
}

// Whether `ferry topic info --json` lists node `name` among the
// subscribers or the observers of `topic`.
bool attached(const TestDomain& domain, const std::string& topic, const std::string& name) {
  const json info = ferry_json(domain, {"topic", "info", topic});
  for (const char* list : {"subscribers", "observers"}) {
    for (const auto& p : info[list]) {
      if (p["node"] == name) return true;
    }
  }
  return false;
}

// A pipe between the test and a child; the test closes its write end once
// the child is forked (close_write), so that a read returns 0, not blocks,
// when the child is gone.
struct Pipe {
  std::array<int, 2> fd{-1, -1};
  Pipe() { REQUIRE(::pipe(fd.data()) == 0); }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_write() { ::close(std::exchange(fd[1], -1)); }
  [[nodiscard]] bool signal() const {
    const char byte = 1;
    return ::write(fd[1], &byte, 1) == 1;
  }
  // One byte within `timeout`.
  [[nodiscard]] bool wait(std::chrono::milliseconds timeout) const {
    pollfd p{fd[0], POLLIN, 0};
    char byte = 0;
    return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1 && ::read(fd[0], &byte, 1) == 1;
  }
};

// The queues `ferry topic info --json` lists on `topic`.
std::size_t queue_count(const TestDomain& domain, const std::string& topic) {
  return ferry_json(domain, {"topic", "info", topic})["queues"].size();
}

// The first JSON object a program printed (one per line).
json first_json_line(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);
  return ferry::test::parse_json(line);
}

}  // namespace

TEST_CASE(
    "a stopped topic echo never holds a block publisher: every sample reaches the real "
    "subscriber") {
  ServedConfig served(
      seq_config("  - { name: cmd, type: Seq, capacity: 4, policy: block, "
                 "block_timeout_ms: 2000 }\n",
                 kLiveness));
  // Sanitizer builds: a tenth (scaled), for time.
  const std::uint64_t samples = scaled(100'000, 10);

  Background echo(served.domain, {bin_path("ferry"), "topic", "echo", "cmd", "--json"});
  REQUIRE(eventually([&] { return attached(served.domain, "cmd", "ferry-echo"); }));

  // The real subscriber, in its own process: every sample, in order; it
  // stays until told to go (`done`), so that topic info still lists it.
  Pipe ready;
  Pipe done;
  Child real([&] {
    ferry::Node node{"controller"};
    auto sub = node.subscriber<Seq>("cmd");
    if (!ready.signal()) return 9;
    for (std::uint64_t i = 0; i < samples; ++i) {
      auto s = sub.take(5s);
      if (!s) return 1;
      if ((*s)->seq != i || !intact(**s)) return 2;
    }
    if (!ready.signal()) return 9;
    return done.wait(20s) ? 0 : 3;
  });
  ready.close_write();
  REQUIRE(ready.wait(10s));

  ferry::Node node{"driver"};
  auto pub = node.publisher<Seq>("cmd");
  REQUIRE(eventually([&] { return queue_count(served.domain, "cmd") == 2; }));
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  CHECK(pub.subscriber_count() == 1);  // the observer is not counted
  // The echo took nothing yet or a few samples; stopped, it takes none.
  echo.signal(SIGSTOP);

  using Clock = std::chrono::steady_clock;
  Clock::duration longest{};
  std::uint64_t over_1ms = 0;
  std::uint64_t timed_out = 0;
  std::uint64_t published = 0;
  bool counts_real_only = true;
  for (; published < samples; ++published) {
    const auto start = Clock::now();
    const ferry::PublishResult r = pub.publish(make_seq(1, published));
    const auto took = Clock::now() - start;
    longest = std::max(longest, took);
    if (took >= 1ms) ++over_1ms;
    timed_out += r.timed_out;
    counts_real_only = counts_real_only && r.delivered == 1 && r.overwritten == 0 && !r.error;
    // Waiting for the stopped echo would take block_timeout_ms: stop at once.
    if (r.timed_out != 0 || took >= 500ms) break;
  }
  CHECK(ready.wait(10s));  // the real subscriber has them all
  MESSAGE("longest publish " << std::chrono::duration<double, std::micro>(longest).count()
                             << " us; publishes of 1 ms or more: " << over_1ms << " of "
                             << published);
  CHECK(published == samples);
  CHECK(timed_out == 0);
  CHECK(counts_real_only);  // delivered 1 each time: the observer is not in the result
  // Waiting for the stopped observer would take block_timeout_ms (2000 ms),
  // on every publish once its queue is full. Idle, every publish returns in
  // under 1 ms; on a loaded 2-CPU machine (CI, other builds) a publish is
  // now and then descheduled, or waits for the real subscriber (capacity 4)
  // while that one is, for a millisecond or more: 877 of 100,000 at a load
  // average of 13. Neither is the observer's doing, so the bound is loose.
  CHECK(over_1ms <= samples / 20);
  CHECK(longest < 1000ms);

  // topic info: the echo is listed apart, and its queue's overwritten count
  // is what it missed.
  const json info = ferry_json(served.domain, {"topic", "info", "cmd"});
  REQUIRE(info["observers"].size() == 1);
  CHECK(info["observers"][0]["node"] == "ferry-echo");
  REQUIRE(info["subscribers"].size() == 1);
  CHECK(info["subscribers"][0]["node"] == "controller");
  REQUIRE(info["queues"].size() == 2);
  bool saw_observer_queue = false;
  for (const auto& q : info["queues"]) {
    if (q["observer"] == true) {
      saw_observer_queue = true;
      CHECK(q["subscriber"] == "ferry-echo");
      CHECK(q["overwritten"].get<std::uint64_t>() > 0);
      CHECK(q["timed_out"] == 0);
    } else {
      CHECK(q["delivered"].get<std::uint64_t>() == samples);
      CHECK(q["timed_out"] == 0);
    }
  }
  CHECK(saw_observer_queue);
  const json list = ferry_json(served.domain, {"topic", "list"});
  REQUIRE(list.size() == 1);
  CHECK(list[0]["subscribers"] == 1);
  CHECK(list[0]["observers"] == 1);
  const auto text =
      ferry::test::run_program(served.domain, {bin_path("ferry"), "topic", "info", "cmd"});
  CHECK(text.out.find("observers (") != std::string::npos);
  CHECK(text.out.find("ferry-echo (observer)") != std::string::npos);
  echo.signal(SIGCONT);
  REQUIRE(done.signal());
  CHECK(real.wait(10s) == 0);
}

TEST_CASE("echo, hz and bw attach to a topic at max_subscribers") {
  ServedConfig served(
      seq_config("  - { name: pose, type: Seq, capacity: 16, max_subscribers: 1 }\n"));
  ferry::Node node{"robot"};
  auto pub = node.publisher<Seq>("pose");
  auto real = node.subscriber<Seq>("pose");
  // The topic is full for real subscribers...
  CHECK_THROWS_WITH_AS(node.subscriber<Seq>("pose"),
                       doctest::Contains("already has 1 subscribers, its max_subscribers is 1"),
                       ferry::Error);

  // ...but not for tools.
  Background echo(served.domain,
                  {bin_path("ferry"), "topic", "echo", "pose", "--count", "1", "--json"});
  Background hz(served.domain,
                {bin_path("ferry"), "topic", "hz", "pose", "--duration", "1", "--json"});
  Background bw(served.domain,
                {bin_path("ferry"), "topic", "bw", "pose", "--duration", "1", "--json"});
  REQUIRE(eventually([&] { return observer_count(served.domain, "pose") == 3; }));
  CHECK(pub.subscriber_count() == 1);
  const auto end = std::chrono::steady_clock::now() + 3s;
  for (std::uint64_t i = 0; std::chrono::steady_clock::now() < end; ++i) {
    (void)pub.publish(make_seq(1, i));
    while (real.take()) {
    }
    if (::waitpid(echo.pid(), nullptr, WNOHANG) != 0 && i > 50) break;  // echo is done
    std::this_thread::sleep_for(5ms);
  }
  CHECK(echo.wait(5s) == 0);
  CHECK(first_json_line(echo.out())["publisher"] == 1);
  CHECK(hz.wait(5s) == 0);
  CHECK(bw.wait(5s) == 0);
  INFO("hz: " << hz.out() << hz.err());
  INFO("bw: " << bw.out() << bw.err());
  CHECK(first_json_line(hz.out())["samples"].get<std::uint64_t>() > 0);
  CHECK(first_json_line(bw.out())["samples"].get<std::uint64_t>() > 0);
}

TEST_CASE("an observer killed with kill -9 while holding pooled samples leaves the pool whole") {
  ServedConfig served(
      seq_config("  - { name: log, type: bytes, max_size: 64KiB, capacity: 8, "
                 "policy: block, max_held: 4 }\n",
                 "pool:\n  - { chunk_size: 64KiB, count: 64 }\n"));
  ferry::Node node{"logger"};
  auto pub = node.publisher<ferry::Bytes>("log");
  auto real = node.subscriber<ferry::Bytes>("log");

  Pipe holding;
  Child observer([&] {
    ferry::Node n{"watcher"};
    auto sub = n.subscriber<ferry::Bytes>("log", ferry::SubscriberOptions{.observer = true});
    std::vector<ferry::Sample<ferry::Bytes>> held;
    while (held.size() < 4) {
      auto s = sub.take(5s);
      if (!s) return 1;
      held.push_back(std::move(*s));
    }
    if (!holding.signal()) return 2;
    ::pause();  // holds 4 samples, and more are queued to it, until killed
    return 0;
  });
  holding.close_write();
  REQUIRE(eventually([&] { return queue_count(served.domain, "log") == 2; }));

  const std::vector<std::byte> text(40'000, std::byte{'x'});
  auto publish_some = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const ferry::PublishResult r = pub.publish(std::span<const std::byte>(text));
      CHECK(r.delivered == 1);  // the real subscriber only
      CHECK(!r.error);
      CHECK(real.take(1s));  // taken and released at once
    }
  };
  publish_some(12);  // 4 held by the observer, up to 8 queued to it
  REQUIRE(holding.wait(10s));
  publish_some(8);
  const auto before = ferry::test::pool_count(served.domain.name());
  CHECK(before.free < before.total);  // the observer holds chunks now
  observer.kill(SIGKILL);
  (void)observer.wait(5s);
  REQUIRE(eventually([&] { return observer_count(served.domain, "log") == 0; }));
  publish_some(4);  // the publisher picks the observer's leaving up
  CHECK(ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f); }));
}
