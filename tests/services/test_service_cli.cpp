// `ferry service list | info | call`, services in `ferry node list`, and
// `ferry bench rpc`, run as a user would (docs/services.md).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "json_text.hpp"
#include "service_types.hpp"
#include "temp_files.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = service_config();
using Served = ferry::test::ServedDomain<kConfig>;

RunResult ferry_cli(const ferry::test::TestDomain& domain, std::vector<std::string> args) {
  args.insert(args.begin(), bin_path("ferry"));
  return run_program(domain, args);
}

}  // namespace

TEST_CASE_FIXTURE(Served, "ferry service list, info and call; servers and clients in node list") {
  ferry::Node node{"adder"};
  auto server = node.server<AddRequest, AddResponse>("calc/add");
  std::atomic<bool> stop{false};
  std::thread serving([&] {
    while (!stop.load()) {
      if (auto r = server.take_request(10ms)) r->respond(answer(**r));
    }
  });
  ferry::Node calling{"calling-node"};
  auto client = calling.client<AddRequest, AddResponse>("calc/add");

  auto list = ferry_cli(domain, {"service", "list", "--json"});
  INFO(list.err);
  REQUIRE(list.exit_code == 0);
  const auto services = ferry::test::parse_json(list.out);
  REQUIRE(services.size() == 2);
  const auto& add = services[0]["name"] == "calc/add" ? services[0] : services[1];
  CHECK(add["request"] == "AddRequest");
  CHECK(add["response"] == "AddResponse");
  CHECK(add["capacity"] == 8);
  CHECK(add["server"]["node"] == "adder");
  CHECK(add["clients"] == 1);
  const auto text = ferry_cli(domain, {"service", "list"});
  CHECK(text.out.find("calc/add") != std::string::npos);
  CHECK(text.out.find("adder") != std::string::npos);

  const auto info = ferry_cli(domain, {"service", "info", "calc/add"});
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("AddRequest {client u64, n u64, a u64, b u64}") != std::string::npos);
  CHECK(info.out.find("calling-node") != std::string::npos);
  CHECK(ferry_cli(domain, {"service", "info", "nope"}).exit_code == 1);

  const auto call = ferry_cli(domain, {"service", "call", "calc/add", "{a: 40, b: 2, n: 7}"});
  INFO(call.err);
  CHECK(call.exit_code == 0);
  CHECK(call.out == "client: 0\nn: 7\nsum: 42\n");
  const auto json = ferry_cli(domain, {"service", "call", "calc/add", "{a: 1, b: 2}", "--json"});
  CHECK(json.exit_code == 0);
  CHECK(ferry::test::parse_json(json.out)["sum"] == 3);
  const auto bad = ferry_cli(domain, {"service", "call", "calc/add", "{a: 1, c: 2}"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("'c'") != std::string::npos);
  const auto no_server =
      ferry_cli(domain, {"service", "call", "calc/big", "{a: 1}", "--timeout", "100"});
  CHECK(no_server.exit_code == 1);
  CHECK(no_server.err.find("no server") != std::string::npos);

  const auto nodes = ferry_cli(domain, {"node", "list"});
  CHECK(nodes.out.find("serves calc/add") != std::string::npos);
  CHECK(nodes.out.find("client calc/add") != std::string::npos);
  CHECK(nodes.out.find("_srv/") == std::string::npos);
  const auto nodes_json =
      ferry::test::parse_json(ferry_cli(domain, {"node", "list", "--json"}).out);
  bool found = false;
  for (const auto& n : nodes_json) {
    if (n["name"] == "adder") {
      found = true;
      CHECK(n["servers"] == nlohmann::json::array({"calc/add"}));
    }
  }
  CHECK(found);
  const auto top = ferry_cli(domain, {"top", "--count", "1"});
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("service calc/add") != std::string::npos);
  CHECK(top.out.find("/rr/") == std::string::npos);
  // Topics that carry services are not topics to the user.
  const auto topics = ferry_cli(domain, {"topic", "list"});
  CHECK(topics.out.find("_srv/") == std::string::npos);
  CHECK(topics.out.find("plain") != std::string::npos);

  stop.store(true);
  serving.join();
}

TEST_CASE("ferry config check covers services") {
  ferry::test::TestDomain domain;
  const auto path = ferry::test::write_file(
      domain, "bad.yaml",
      service_config("  - { name: plain, request: AddRequest, response: Nope }\n"));
  const auto r = ferry_cli(domain, {"config", "check", path});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.yaml:23:") != std::string::npos);
  CHECK(r.err.find("undeclared response type 'Nope'") != std::string::npos);
  CHECK(r.err.find("has the name of the topic") != std::string::npos);
}

TEST_CASE("ferry bench rpc measures ferry against a Unix socket") {
#if FERRY_TEST_HAVE_BENCH
  ferry::test::TestDomain domain;
  const auto r = ferry_cli(domain, {"bench", "rpc", "--rounds", "500", "--repeat", "1", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = ferry::test::parse_json(r.out);
  CHECK(j["rounds"] == 500);
  REQUIRE(j["results"].size() >= 2);
  CHECK(j["results"][0]["transport"] == "ferry");
  CHECK(j["results"][0]["p50_ns"].get<std::int64_t>() > 0);
  CHECK(j["results"][1]["transport"] == "unix-socket");
#else
  MESSAGE("the benchmarks are not built in");
#endif
}
