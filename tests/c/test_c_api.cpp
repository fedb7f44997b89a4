// The C API across processes, against a real ferryd: C programs (c_peer,
// c_misuse; C11, -Wall -Wextra -Werror) on one side, the C++ API on the
// other: C to C++ and C++ to C, inline and by loan, batches, a waitset and
// its descriptor in poll(), a node declared dead, every misuse; and no
// system call on the C hot path (strace between two markers).
#include <doctest/doctest.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "c_api_types.hpp"  // Reading: `ferry gen cpp c_api.yaml`
#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "ferry/ferry.hpp"
#include "pool_probe.hpp"
#include "temp_files.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using namespace std::chrono_literals;

namespace {

std::string c_api_yaml() { return ferry::test::read_file(FERRY_TEST_C_YAML); }

// What c_peer sends and checks as reading i.
Reading reading(std::uint64_t i) {
  Reading r{};
  r.seq = i;
  r.value = static_cast<double>(i) * 0.5;
  std::snprintf(r.label, sizeof r.label, "c-%llu", static_cast<unsigned long long>(i));
  r.flags = static_cast<std::uint16_t>(i & 0xffffU);
  r.raw[25] = static_cast<std::uint8_t>(i & 0xffU);
  return r;
}

bool same(const Reading& r, std::uint64_t i) {
  const Reading want = reading(i);
  return r.seq == want.seq && r.value == want.value && std::strcmp(r.label, want.label) == 0 &&
         r.flags == want.flags && r.raw[25] == want.raw[25];
}

struct CDomain {
  explicit CDomain(const std::string& yaml = c_api_yaml()) : daemon(domain, yaml) {
    ferry::test::use_domain_env(domain);
  }
  TestDomain domain;
  ferry::test::Daemon daemon;

  // A C program of this directory, in a child process of this domain.
  Child run(std::vector<std::string> argv) const {
    return Child([this, argv]() -> int { ferry::test::exec_in_domain(domain, argv); });
  }
};

constexpr std::uint64_t kCount = 300;  // more than a queue holds (64): the block policy waits

// Takes kCount readings in order from `sub` (C++), each checked.
void take_all(ferry::Subscriber<Reading>& sub) {
  for (std::uint64_t i = 0; i < kCount; ++i) {
    auto s = sub.take(5s);
    REQUIRE(s);
    CHECK(same(**s, i));
    CHECK(s->info().sequence == i);
  }
}

void publish_all(ferry::Publisher<Reading>& pub, bool by_loan) {
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  for (std::uint64_t i = 0; i < kCount; ++i) {
    if (by_loan) {
      auto loan = pub.loan();
      REQUIRE(loan);
      **loan = reading(i);
      REQUIRE(pub.publish(std::move(*loan)).delivered == 1);
    } else {
      REQUIRE(pub.publish(reading(i)).delivered == 1);
    }
  }
}

// c_api.yaml with a short liveness timeout (400 ms), only for the case that
// waits for a death: elsewhere a loaded machine must not starve a heartbeat
// into one.
struct ShortLiveness : CDomain {
  ShortLiveness() : CDomain(short_liveness()) {}
  static std::string short_liveness() {
    std::string yaml = c_api_yaml();
    const std::string from = "timeout_ms: 5000";
    yaml.replace(yaml.find(from), from.size(), "timeout_ms: 400");
    return yaml;
  }
};

}  // namespace

TEST_CASE_FIXTURE(CDomain, "a C publisher to a C++ subscriber, inline and by loan") {
  ferry::Node node{"cpp"};
  auto sub = node.subscriber<Reading>("c/out");
  for (const char* mode : {"publish", "publish-loan"}) {
    CAPTURE(mode);
    Child c = run({FERRY_TEST_C_PEER, mode, "c/out", std::to_string(kCount)});
    take_all(sub);
    CHECK(c.wait() == 0);
  }
}

TEST_CASE_FIXTURE(CDomain, "a C++ publisher to a C subscriber, inline and by loan") {
  ferry::Node node{"cpp"};
  auto pub = node.publisher<Reading>("c/in");
  for (const bool by_loan : {false, true}) {
    CAPTURE(by_loan);
    Child c = run({FERRY_TEST_C_PEER, "take", "c/in", std::to_string(kCount)});
    publish_all(pub, by_loan);
    CHECK(c.wait() == 0);
    REQUIRE(eventually([&] { return pub.subscriber_count() == 0; }));
  }
}

TEST_CASE_FIXTURE(CDomain,
                  "batches between C and C++: publish_many and loan_many to take_many, both ways") {
  ferry::Node node{"cpp"};
  auto sub = node.subscriber<Reading>("c/out");
  for (const char* mode : {"publish-many", "publish-loan-many"}) {
    CAPTURE(mode);
    Child publisher = run({FERRY_TEST_C_PEER, mode, "c/out", std::to_string(kCount)});
    std::array<Reading, 40> out{};
    std::uint64_t next = 0;
    while (next < kCount) {
      const std::size_t n = sub.take_many(std::span(out), 5s).value();
      REQUIRE(n > 0);
      for (std::size_t k = 0; k < n; ++k) CHECK(same(out[k], next++));
    }
    CHECK(publisher.wait() == 0);
    REQUIRE(eventually([&] { return sub.publisher_count() == 0; }));
  }

  auto pub = node.publisher<Reading>("c/in");
  Child taker = run({FERRY_TEST_C_PEER, "take-many", "c/in", std::to_string(kCount)});
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  std::vector<Reading> all;
  for (std::uint64_t i = 0; i < kCount; ++i) all.push_back(reading(i));
  for (std::size_t at = 0; at < all.size(); at += 25) {
    const auto part = std::span(all).subspan(at, std::min<std::size_t>(25, all.size() - at));
    CHECK(pub.publish_many(part).delivered == part.size());
  }
  CHECK(taker.wait() == 0);
}

TEST_CASE_FIXTURE(CDomain, "a C waitset over two topics, and its descriptor in poll()") {
  ferry::Node node{"cpp"};
  auto a = node.publisher<Reading>("c/in");
  auto b = node.publisher<Reading>("c/in2");
  Child waiter = run({FERRY_TEST_C_PEER, "waitset", "c/in", "c/in2", std::to_string(kCount)});
  REQUIRE(a.wait_for_subscribers(1, std::chrono::seconds(10)));
  REQUIRE(b.wait_for_subscribers(1, std::chrono::seconds(10)));
  for (std::uint64_t i = 0; i < kCount; ++i) {
    REQUIRE(a.publish(reading(i)).delivered == 1);
    if (i % 3 == 0) std::this_thread::sleep_for(100us);  // let the waiter sleep now and then
    REQUIRE(b.publish(reading(i)).delivered == 1);
  }
  CHECK(waiter.wait() == 0);
  // The waiter's subscriber gone first: else the count below may still be
  // its own, and the poller not matched yet when the samples go.
  REQUIRE(eventually([&] { return a.subscriber_count() == 0; }));

  Child poller = run({FERRY_TEST_C_PEER, "poll", "c/in", std::to_string(kCount)});
  REQUIRE(a.wait_for_subscribers(1, std::chrono::seconds(10)));
  for (std::uint64_t i = 0; i < kCount; ++i) {
    REQUIRE(a.publish(reading(i)).delivered == 1);
    if (i % 3 == 0) std::this_thread::sleep_for(100us);
  }
  CHECK(poller.wait() == 0);
}

TEST_CASE_FIXTURE(ShortLiveness,
                  "a C subscriber declared dead gets NODE_DECLARED_DEAD from ferry_take") {
  ferry::Node node{"cpp"};
  auto pub = node.publisher<Reading>("c/in");
  const auto ready = domain.runtime_dir() / "c_peer.ready";
  Child sleepy = run({FERRY_TEST_C_PEER, "dead", "c/in", ready.string()});
  REQUIRE(eventually([&] { return std::filesystem::exists(ready); }));
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  sleepy.kill(SIGSTOP);
  // ferryd declares it dead after timeout_ms (400) without a heartbeat.
  CHECK(eventually([&] { return pub.subscriber_count() == 0; }, 5s));
  sleepy.kill(SIGCONT);
  CHECK(sleepy.wait(30s) == 0);
}

TEST_CASE_FIXTURE(CDomain, "every misuse of the C API is an error value and a sentence") {
  Child misuse = run({FERRY_TEST_C_MISUSE});
  CHECK(misuse.wait() == 0);
  // The loans its publisher held when destroyed and the sample that
  // outlived its subscriber are back in the pool.
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 3s); }));
}

#ifdef FERRY_TEST_STRACE
TEST_CASE_FIXTURE(CDomain, "the C hot path makes no system call (strace between two markers)") {
  const std::string trace = (domain.runtime_dir() / "c_peer.strace").string();
  Child traced =
      run({FERRY_TEST_STRACE, "-f", "-qq", "-o", trace, FERRY_TEST_C_PEER, "hot-loop", "c/loop"});
  REQUIRE(traced.wait() == 0);
  // Lines are "TID name(args) = result"; the markers are the main thread's
  // two getppid() calls, and nothing of that thread may come between them.
  std::ifstream in(trace);
  std::string line;
  std::string main_tid;
  int markers = 0;
  std::vector<std::string> between;
  while (std::getline(in, line)) {
    const std::string tid = line.substr(0, line.find(' '));
    if (line.find("getppid") != std::string::npos && (main_tid.empty() || tid == main_tid)) {
      main_tid = tid;
      // strace splits a call that another thread interrupts into
      // "getppid( <unfinished ...>" and "<... getppid resumed>": one marker.
      if (line.find("resumed>") == std::string::npos) ++markers;
      continue;
    }
    if (markers == 1 && tid == main_tid) between.push_back(line);
  }
  CHECK(markers == 2);
  CHECK_MESSAGE(between.empty(), "system calls on the hot path: "
                                     << between.size() << ", first: "
                                     << (between.empty() ? std::string() : between.front()));
}
#endif
