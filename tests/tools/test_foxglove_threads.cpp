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

// Subscribers of `topic` as ferryd lists them (no `ferry` program here).
std::size_t subscribers(const std::string& domain, const std::string& topic) {
  auto client = ferry::discovery::Client::connect(domain, "fox-test", 3000ms);
  if (!client) return 0;
  auto reply = client->request(ferry::discovery::ListTopics{0, topic, 0}, 3000ms);
  if (!reply) return 0;
  const auto& topics = std::get<ferry::discovery::TopicList>(*reply).topics;
  return topics.empty() ? 0 : topics.front().subscribers.size();
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

  Client watcher(domain, "watch",
                 {{"url", url},
                  {"subscribe", {"robot/pose"}},
                  {"done", {{"robot/pose", 199}}},
                  {"timeout_ms", 20000}});
  REQUIRE(watcher.subscribed());
  Child commander([] {
    ferry::Node node{"commander"};
    auto sub = node.subscriber<Pose>("robot/cmd");
    for (std::uint64_t i = 0; i < 10; ++i) {
      auto s = sub.take(20s);
      if (!s || (*s)->seq != i) return 3;
    }
    return 0;
  });
  Child poses([] { return publish_poses(200, 1ms); });
  REQUIRE(eventually([&] { return subscribers(domain.name(), "robot/cmd") == 1; }, 10s, 20ms));
  Client publisher(domain, "publish",
                   {{"url", url},
                    {"topic", "robot/cmd"},
                    {"schema_name", "geo/msg/Pose"},
                    {"count", 10},
                    {"interval_ms", 5}});
  const json p = publisher.result();
  const json w = watcher.result();
  CHECK(poses.wait() == 0);
  CHECK(commander.wait() == 0);
  CHECK(w["topics"]["robot/pose"]["count"] == 200);
  CHECK(w["topics"]["robot/pose"]["gaps"] == 0);
  CHECK(p["refused"].size() == 5);

  ::kill(::getpid(), SIGINT);  // the server's signal_set takes it
  server.join();
}
