#pragma once
// The nodes ferryd lists for a test domain, asked as `ferry node list` asks
// (a ListNodes request of a client of its own); the running test fails when
// ferryd does not answer within 2 s.

#include <doctest/doctest.h>

#include <chrono>
#include <variant>
#include <vector>

#include "ferry/discovery/client.hpp"
#include "test_domain.hpp"

namespace ferry::test {

// The nodes ferryd lists, with their heartbeat ages.
inline std::vector<ferry::discovery::NodeInfo> list_nodes(const TestDomain& domain) {
  using std::chrono::seconds;
  auto client = ferry::discovery::Client::connect(domain.name(), "probe", seconds(2));
  REQUIRE(client.has_value());
  auto reply = client->request(ferry::discovery::ListNodes{0}, seconds(2));
  REQUIRE(reply.has_value());
  const auto* list = std::get_if<ferry::discovery::NodeList>(&*reply);
  REQUIRE(list != nullptr);
  return list->nodes;
}

}  // namespace ferry::test
