// `limits:`: ferryd's limits on what its clients may take, with defaults,
// and errors that name file:line:col like every other key.

#include <doctest/doctest.h>

#include <string>

#include "ferry/config/load.hpp"

using namespace ferry::config;

TEST_CASE("limits have stated defaults when omitted") {
  const Config config = load_string("topics: []\n", "t.yaml");
  CHECK(config.limits.max_topics == 1024);
  CHECK(config.limits.max_ports_per_node == 256);
  CHECK(config.limits.max_connections == 0);
  CHECK(config.limits.max_nodes == 65535);
  CHECK(config.limits.hello_timeout_ms == 3000);
}

TEST_CASE("limits are read from the YAML") {
  const Config config = load_string(
      "limits: { max_topics: 10, max_ports_per_node: 3, max_connections: 50, max_nodes: 7, "
      "hello_timeout_ms: 250 }\n",
      "t.yaml");
  CHECK(config.limits == DaemonLimits{10, 3, 50, 7, 250});
}

TEST_CASE("a bad limit names its position and what was expected") {
  const auto diagnostics =
      check_string("limits:\n  max_nodes: 70000\n  max_topic: 3\n  max_topics: lots\n", "t.yaml");
  REQUIRE(diagnostics.size() == 3);
  CHECK(diagnostics[0].to_string().starts_with("t.yaml:2:14: "));
  CHECK(diagnostics[0].to_string().find("65535") != std::string::npos);
  CHECK(diagnostics[1].to_string().starts_with("t.yaml:3:3: "));
  CHECK(diagnostics[1].to_string().find("did you mean 'max_topics'") != std::string::npos);
  CHECK(diagnostics[2].to_string().starts_with("t.yaml:4:15: "));
  const auto not_a_map = check_string("limits: 5\n", "t.yaml");
  REQUIRE(not_a_map.size() == 1);
  CHECK(not_a_map[0].to_string().starts_with("t.yaml:1:9: "));
}
