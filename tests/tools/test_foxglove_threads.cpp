// ferry foxglove's threads under TSan: the server (foxglove::run) in this
// process, with its I/O, taking and publishing threads, streaming to the
// Node.js Foxglove client and publishing what a client sends, then stopped
// by SIGINT. The other tests run the `ferry` program, which the TSan build
// does not build; this one sees the hand-offs between the server's threads.
#include <signal.h>

#include <future>

#include "ferry/discovery/client.hpp"
#include "ferry/foxglove/server.hpp"
#include "foxglove_test_util.hpp"

using namespace std::chrono_literals;
using namespace fox_test;

namespace {

// What the CLI asks ferryd (tools/ferry/daemon_query.cpp), for a domain of
// a few topics: one page of the topic list, the configuration the test wrote.
ferry::foxglove::DomainQueries queries(const std::string& domain) {
  return {.list_topics =
              [domain] {
                auto client = ferry::discovery::Client::connect(domain, "fox-test", 3000ms);
                if (!client) throw std::runtime_error(client.error());
                auto reply = client->request(ferry::discovery::ListTopics{}, 3000ms);
                if (!reply) throw std::runtime_error(reply.error());
                return std::get<ferry::discovery::TopicList>(*reply).topics;
              },
          .fetch_config = [] { return ferry::config::load_string(kYaml); }};
}

}  // namespace

TEST_CASE_FIXTURE(Served, "the server's threads stream and publish, then stop on SIGINT") {
  ferry::foxglove::Options options;
  options.domain = domain.name();
  options.port = 0;
  std::promise<std::uint16_t> listening;
  std::thread server([&] {
    ferry::foxglove::run(options, queries(domain.name()),
                         [&](std::uint16_t port) { listening.set_value(port); });
  });
  auto port = listening.get_future();
  REQUIRE(port.wait_for(20s) == std::future_status::ready);
  const std::string url = "ws://127.0.0.1:" + std::to_string(port.get());

  // Everything in this process (TSan does not follow a fork of a threaded
  // process): the poses' publisher and the commands' subscriber.
  ferry::Node node{"fox-test"};
  auto poses = node.publisher<Pose>("robot/pose");
  auto commands = node.subscriber<Pose>("robot/cmd");
  Client watcher(domain, "watch",
                 {{"url", url},
                  {"subscribe", {"robot/pose"}},
                  {"done", {{"robot/pose", 199}}},
                  {"timeout_ms", 20000}});
  REQUIRE(watcher.subscribed());
  REQUIRE(wait_for_observer(poses));
  for (std::uint64_t i = 0; i < 200; ++i) {
    Pose p{};
    p.seq = i;
    p.stamp_ns = realtime_ns();
    CHECK(!poses.publish(p).error);
    std::this_thread::sleep_for(1ms);
  }
  Client publisher(domain, "publish",
                   {{"url", url},
                    {"topic", "robot/cmd"},
                    {"schema_name", "geo/msg/Pose"},
                    {"count", 10},
                    {"interval_ms", 5}});
  const json p = publisher.result();
  const json w = watcher.result();
  for (std::uint64_t i = 0; i < 10; ++i) {
    auto s = commands.take(10s);
    REQUIRE(s);
    CHECK((*s)->seq == i);
    CHECK((*s)->x == static_cast<double>(i) / 2);
  }
  CHECK(w["topics"]["robot/pose"]["count"] == 200);
  CHECK(w["topics"]["robot/pose"]["gaps"] == 0);
  CHECK(p["refused"].size() == 5);

  ::kill(::getpid(), SIGINT);  // the server's signal_set takes it
  server.join();
}
