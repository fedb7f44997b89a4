// `ferry topic list` and `topic info` on a topic whose ports and queues do
// not fit one 64 KiB datagram (40 publishers x 40 subscribers, long node
// names): the daemon answers in parts and the CLI puts them together.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "ferry/discovery/client.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using namespace std::chrono_literals;

TEST_CASE("a topic with 40 publishers and 40 subscribers is listed whole by topic list and info") {
  TestDomain domain;
  // Raw protocol clients do not beat: a long timeout keeps them alive.
  Daemon daemon(domain,
                "liveness: { heartbeat_ms: 1000, timeout_ms: 60000 }\n"
                "defaults: { capacity: 1, max_publishers: 40, max_subscribers: 40 }\n");
  ferry::test::use_domain_env(domain);
  std::vector<ferry::discovery::Client> clients;
  for (int i = 0; i < 80; ++i) {
    const bool publisher = i % 2 == 0;
    const std::string name = std::string(publisher ? "publisher-" : "subscriber-") +
                             std::string(40, 'x') + "-" + std::to_string(i);
    auto client = ferry::discovery::Client::connect(domain.name(), name, 3000ms);
    REQUIRE_MESSAGE(client.has_value(), (client ? "" : client.error()));
    ferry::discovery::PortRequest request{"crowd", "T", 8, 8, 0, {}};
    ferry::discovery::Message message;
    if (publisher) {
      message = ferry::discovery::CreatePublisher{request};
    } else {
      message = ferry::discovery::CreateSubscriber{request};
    }
    auto reply = client->request(message, 3000ms);
    REQUIRE(reply.has_value());
    REQUIRE(std::holds_alternative<ferry::discovery::PortCreated>(*reply));
    clients.push_back(std::move(*client));
  }

  const auto list = ferry_json(domain, {"topic", "list"});
  REQUIRE(list.size() == 1);
  CHECK(list[0]["name"] == "crowd");
  CHECK(list[0]["publishers"] == 40);
  CHECK(list[0]["subscribers"] == 40);

  const auto info = ferry_json(domain, {"topic", "info", "crowd"});
  CHECK(info["publishers"].size() == 40);
  CHECK(info["subscribers"].size() == 40);
  CHECK(info["queues"].size() == 1600);
}
