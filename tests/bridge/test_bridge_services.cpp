// Bridged services (docs/bridge.md, "Services") against someone else's code:
// srv_peer, a plain Cyclone program built with idlc from a hand-written IDL,
// plays a ROS 2 client and a ROS 2 service in rmw_cyclonedds' wire form.
// One host, one ferry domain with its ferryd, one bridge.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <ferry/error_name.hpp>
#include <ferry/ferry.hpp>
#include <memory>
#include <thread>

#include "bridge_harness.hpp"
#include "daemon_fixture.hpp"
#include "eventually.hpp"

using namespace std::chrono_literals;
using ferry::test::Background;

struct AddTwoIntsRequest {
  std::int64_t a;
  std::int64_t b;
};
FERRY_TYPE(AddTwoIntsRequest);
struct AddTwoIntsResponse {
  std::int64_t sum;
};
FERRY_TYPE(AddTwoIntsResponse);

namespace {

const char* const kYaml =
    "liveness: { heartbeat_ms: 100, timeout_ms: 2000 }\n"
    "types:\n"
    "  AddTwoIntsRequest:\n"
    "    ros2: example_interfaces/msg/AddTwoIntsRequest\n"
    "    fields:\n"
    "      - { name: a, type: i64 }\n"
    "      - { name: b, type: i64 }\n"
    "  AddTwoIntsResponse:\n"
    "    ros2: example_interfaces/msg/AddTwoIntsResponse\n"
    "    fields:\n"
    "      - { name: sum, type: i64 }\n"
    "services:\n"
    "  - { name: calc/add, request: AddTwoIntsRequest, response: AddTwoIntsResponse, "
    "capacity: 8 }\n"
    "  - { name: calc/remote, request: AddTwoIntsRequest, response: AddTwoIntsResponse, "
    "capacity: 8 }\n";

// A DDS domain of this test process alone, claimed for its whole life.
std::string dds_domain() {
  static const ferry::test::DdsDomainClaim claim;
  return std::to_string(claim.id());
}

struct World {
  ferry::test::TestDomain domain;
  ferry::test::Daemon daemon{domain, kYaml};

  std::unique_ptr<Background> bridge(std::vector<std::string> args) {
    std::vector<std::string> argv{
        ferry::test::bin_path("ferry"), "bridge", "--stats", "1", "--dds-domain", dds_domain()};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Background>(domain, argv);
  }
  std::unique_ptr<Background> peer(std::vector<std::string> args, const char* timeout_ms = "5000") {
    args.insert(args.begin(), ferry::test::bin_path("../tests/bridge_srv_peer"));
    return std::make_unique<Background>(
        domain, args,
        std::vector<std::pair<std::string, std::string>>{{"DDS_PEER_DOMAIN", dds_domain()},
                                                         {"SRV_PEER_TIMEOUT_MS", timeout_ms}});
  }
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a ROS 2 client calls a ferry server through --export-service") {
  World w;
  ferry::test::use_domain_env(w.domain);
  // Refused with a sentence: an undeclared service, one both ways.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--export-service", "nope"},
           {"--export-service", "calc/add", "--import-service", "calc/add"}}) {
    auto bad = w.bridge(args);
    CHECK(bad->wait(8s) == 1);
    CHECK(bad->err().find(args.size() == 2 ? "service 'nope' is not declared"
                                           : "is both exported and imported") != std::string::npos);
  }
  auto bridge = w.bridge({"--export-service", "calc/add"});
  REQUIRE(bridge->wait_for("service 'calc/add'", 8s));

  // No ferry server yet: the request is not answered (the ROS 2 client's
  // own timeout ends it), and the bridge says why once.
  {
    auto early = w.peer({"client", "calc/add", "1", "1"}, "400");
    CHECK(early->wait(10s) == 4);
  }
  CHECK(bridge->wait_for("NoServer", 2s));
  CHECK(count(bridge->err(), "NoServer") == 1);

  ferry::Node node{"test-server"};
  auto server = node.server<AddTwoIntsRequest, AddTwoIntsResponse>("calc/add");
  std::atomic<bool> stop{false};
  std::jthread serve([&] {
    // SYNC: relaxed; a stop flag only, joined before anything else is read.
    while (!stop.load(std::memory_order_relaxed)) {
      if (auto req = server.take_request(20ms)) (void)req->respond({(*req)->a + (*req)->b});
    }
  });
  // 200 calls, 8 in flight at once (the service's capacity), each sum checked
  // by the peer, each reply matched by its header.
  auto client = w.peer({"client", "calc/add", "200", "8"});
  CHECK(client->wait(20s) == 0);
  CHECK(client->out().find("ok 200") != std::string::npos);
  INFO(client->err());
  // SYNC: relaxed; see above.
  stop.store(true, std::memory_order_relaxed);
  serve.join();
  CHECK(bridge->interrupt() == 0);
  CHECK(bridge->out().find("service 'calc/add' (export): calls 201 answered 200 failed 1") !=
        std::string::npos);
  INFO(bridge->out());
}

TEST_CASE("a ferry client calls a ROS 2 service through --import-service") {
  World w;
  ferry::test::use_domain_env(w.domain);
  auto bridge = w.bridge({"--import-service", "calc/remote"});
  REQUIRE(bridge->wait_for("service 'calc/remote'", 8s));
  ferry::Node node{"test-client"};
  auto client = node.client<AddTwoIntsRequest, AddTwoIntsResponse>("calc/remote");
  REQUIRE(client.wait_for_server(5s));

  // No DDS server: NoResponse at once, said once in the log.
  for (int i = 0; i < 2; ++i) {
    auto r = client.call({1, 2}, 2s);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == ferry::ErrorCode::NoResponse);
  }
  CHECK(bridge->wait_for("no DDS server matched", 2s));
  CHECK(count(bridge->err(), "no DDS server matched") == 1);

  // A DDS server that answers 40 calls and vanishes on the 41st.
  auto peer = w.peer({"server", "calc/remote", "40"});
  REQUIRE(peer->wait_for("serving", 5s));
  REQUIRE(bridge->wait_for("a DDS server on 'rq/calc/remoteRequest'", 5s));
  const auto calls_start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < 20; ++i) {
    auto r = client.call({i, 100}, 2s);
    REQUIRE_MESSAGE(r.has_value(), "call " << i << ": " << std::string(ferry::name_of(r.error()))
                                           << "\n"
                                           << bridge->err());
    CHECK((*r)->sum == i + 100);
  }
  MESSAGE("20 calls one after the other through the bridge and DDS: "
          << std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::steady_clock::now() - calls_start)
                     .count() /
                 20
          << " us per call");
  // 4 in flight at once.
  for (std::int64_t round = 0; round < 5; ++round) {
    std::vector<ferry::Pending<AddTwoIntsRequest, AddTwoIntsResponse>> pending;
    for (std::int64_t k = 0; k < 4; ++k) {
      auto p = client.send({round * 4 + k, -7});
      REQUIRE(p.has_value());
      pending.push_back(std::move(*p));
    }
    for (std::int64_t k = 0; k < 4; ++k) {
      auto r = pending[static_cast<std::size_t>(k)].take(2s);
      REQUIRE(r.has_value());
      CHECK((*r)->sum == round * 4 + k - 7);
    }
  }
  // The server vanishes with the call in flight: the caller's error comes
  // when its lease ends (1 s), not at the call's 10 s timeout.
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client.call({1, 1}, 10s);
  const auto took = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == ferry::ErrorCode::NoResponse);
  CHECK(took < 4s);
  MESSAGE("the vanished server's call failed after "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(peer->wait(5s) == 0);
  CHECK(bridge->wait_for("the DDS server left", 2s));
  CHECK(count(bridge->err(), "the DDS server left") == 1);

  // A new DDS server takes over.
  auto again = w.peer({"server", "calc/remote", "-1"});
  REQUIRE(again->wait_for("serving", 5s));
  CHECK(ferry::test::eventually(
      [&] {
        auto ok = client.call({5, 6}, 1s);
        return ok.has_value() && (*ok)->sum == 11;
      },
      8s));
  CHECK(bridge->interrupt() == 0);
  INFO(bridge->out());
  INFO(bridge->err());
}
