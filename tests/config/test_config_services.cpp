// `services:` (docs/services.md): checked like topics, every error with
// file:line:col, and the topics a service travels on.

#include <doctest/doctest.h>

#include <string>

#include "ferry/config/config.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/pool_plan.hpp"
#include "ferry/config/service.hpp"

using namespace ferry::config;

namespace {

const std::string kTypes =
    "types:\n"
    "  Q: { fields: [ { name: a, type: u64 } ] }\n"
    "  R: { fields: [ { name: b, type: f64 }, { name: c, type: u32 } ] }\n";

std::string errors(const std::string& yaml) {
  std::string out;
  for (const auto& d : check_string(yaml, "t.yaml")) out += d.to_string() + "\n";
  return out;
}

}  // namespace

TEST_CASE("a declared service and the topics that carry it") {
  const Config c = load_string(kTypes +
                                   "services:\n"
                                   "  - { name: plan, request: Q, response: R, capacity: 4, "
                                   "max_clients: 3 }\n"
                                   "  - { name: a/b, request: R, response: Q }\n",
                               "t.yaml");
  REQUIRE(c.services.size() == 2);
  const Service& s = c.services[0];
  CHECK(s.name == "plan");
  CHECK(s.request == "Q");
  CHECK(s.response == "R");
  CHECK(s.capacity == 4);
  CHECK(s.max_clients == 3);
  CHECK(c.services[1].capacity == 8);
  CHECK(c.services[1].max_clients == 32);
  CHECK(c.find_service("a/b") == &c.services[1]);
  CHECK(c.find_service("x") == nullptr);

  const auto topics = service_topics(c, s);
  REQUIRE(topics.size() == 2);
  CHECK(topics[0].name == "_srv/plan/rq");
  CHECK(topics[0].sample_size == 8);
  CHECK(topics[0].settings.capacity == 4);
  CHECK(topics[0].settings.policy == Policy::DropNew);
  CHECK(topics[0].settings.max_publishers == 3);
  CHECK(topics[0].settings.max_subscribers == 1);
  CHECK(topics[1].name == "_srv/plan/rr");
  CHECK(topics[1].sample_size == 16);
  CHECK(topics[1].settings.capacity == 8);
  CHECK(!plan_pool(c).demands.empty());

  CHECK(service_response_topic("plan", 42) == "_srv/plan/rr/42");
  const auto parsed = parse_service_topic("_srv/a/b/rr/42");
  REQUIRE(parsed);
  CHECK(parsed->service == "a/b");
  CHECK(parsed->client == 42);
  CHECK(parse_service_topic("_srv/a/b/rq")->request);
  CHECK(parse_service_topic("_srv/a/rr")->response_template);
  CHECK(!parse_service_topic("robot/pose"));
  CHECK(!parse_service_topic("_srv/a/rr/x1"));
  CHECK(!parse_service_topic("_srv//rq"));
}

TEST_CASE("bad services: file:line:col, what is wrong and what was expected") {
  const std::string y = kTypes +
                        "topics:\n"
                        "  - { name: plan, type: Q }\n"
                        "services:\n"
                        "  - { name: plan, request: Q, response: R }\n"
                        "  - { name: ok, request: Nope, response: R, capacity: 3 }\n"
                        "  - { name: ok2, request: Q, respons: R }\n"
                        "  - { name: _srv/x, request: Q, response: R, max_clients: 0 }\n"
                        "  - { name: dup, request: Q, response: R }\n"
                        "  - { name: dup, request: Q, response: R }\n";
  const std::string e = errors(y);
  INFO(e);
  CHECK(e.find("t.yaml:7:13: service 'plan' has the name of the topic declared at 5:5") !=
        std::string::npos);
  CHECK(e.find("t.yaml:8:26: undeclared request type 'Nope' for service 'ok'") !=
        std::string::npos);
  CHECK(e.find("t.yaml:8:55: capacity 3 of service 'ok' is not a power of two") !=
        std::string::npos);
  CHECK(e.find("unknown key 'respons' in service 'ok2'; did you mean 'response'?") !=
        std::string::npos);
  CHECK(e.find("service 'ok2' has no 'response'") != std::string::npos);
  CHECK(e.find("t.yaml:10:13: invalid service name '_srv/x'") != std::string::npos);
  CHECK(e.find("max_clients") != std::string::npos);
  CHECK(e.find("t.yaml:12:13: duplicate service 'dup'; first declared at 11:13") !=
        std::string::npos);
  CHECK(errors(kTypes + "topics:\n  - { name: _srv/a/rq, type: Q }\n")
            .find("t.yaml:5:13: topic name '_srv/a/rq' starts with '_srv/'") != std::string::npos);
  const std::string not_list = errors(kTypes + "services: { a: 1 }\n");
  INFO(not_list);
  CHECK(not_list.starts_with("t.yaml:4:11: "));
  CHECK(not_list.find("'services'") != std::string::npos);
}
