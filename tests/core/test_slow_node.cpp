// A node that was only slow (stopped past timeout_ms, then continued) while
// it asked ferryd for ports: ferryd declares it dead, and every request the
// node makes, before, during or after that, ends promptly, with a port (the
// node joined again) or a clear error, never a wait for the 5 s request
// timeout nor a sentence blaming ferryd for not answering.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <random>
#include <string>
#include <thread>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using ferry::test::Child;
using ferry::test::Signal;
using ferry::test::ValuePipe;

namespace {

const std::string kConfig =
    seq_config("  - { name: s, type: Seq, capacity: 8, policy: drop_oldest, max_publishers: 64 }\n",
               "liveness: { heartbeat_ms: 20, timeout_ms: 200 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "a node stopped past timeout_ms while it creates ports gets each answer "
                  "promptly when it continues") {
  Signal started;
  ValuePipe slowest_ms;
  ValuePipe made;
  const int requests = static_cast<int>(scaled(60, 4));
  Child slow([&] {
    ferry::Node node{"slow"};
    started.raise();
    std::uint64_t slowest = 0;
    std::uint64_t ports = 0;
    std::uint64_t unanswered = 0;
    std::vector<ferry::Publisher<Seq>> kept;
    for (int i = 0; i < requests; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        kept.push_back(node.publisher<Seq>("s"));
        ++ports;
      } catch (const ferry::Error& e) {
        // The node was slow, ferryd is not: an error must say what happened.
        if (std::string(e.what()).find("did not answer") != std::string::npos) ++unanswered;
        std::fprintf(stderr, "request %d: %s\n", i, e.what());
      }
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
      slowest = std::max<std::uint64_t>(slowest, static_cast<std::uint64_t>(took));
      if (kept.size() > 8) kept.erase(kept.begin());
      std::this_thread::sleep_for(5ms);
    }
    slowest_ms.send(slowest);
    made.send(ports);
    return unanswered == 0 ? 0 : 1;
  });
  REQUIRE(started.wait());
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> stopped_ms(100, 400);  // often past timeout_ms
  std::uniform_int_distribution<int> running_ms(0, 60);
  std::uint64_t slowest = 0;
  bool done = false;
  while (!done) {
    ::kill(slow.pid(), SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(stopped_ms(random)));
    ::kill(slow.pid(), SIGCONT);
    done = slowest_ms.receive(slowest, std::chrono::milliseconds(running_ms(random)));
  }
  std::uint64_t ports = 0;
  REQUIRE(made.receive(ports, 5s));
  CHECK(slow.wait(10s) == 0);
  MESSAGE(ports << " of " << requests << " port requests made a port; the slowest took " << slowest
                << " ms of running time and stops");
  CHECK(slowest < 2000);
  CHECK(ports > 0);
}
