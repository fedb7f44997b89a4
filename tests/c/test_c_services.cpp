// Services through the C API (docs/services.md), across processes with the
// real ferryd: a C server answers C++ calls, a C client calls a C++ server
// (ferry_call, and calls in flight answered out of order), NO_RESPONSE, and
// types that are not the service's refused.
#include <doctest/doctest.h>
#include <ferry/ferry.h>
#include <unistd.h>

#include <ferry/ferry.hpp>
#include <thread>

#include "daemon_fixture.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using ferry::test::Child;

struct AddRequest {
  std::uint64_t client, n, a, b;
};
FERRY_TYPE(AddRequest);
struct AddResponse {
  std::uint64_t client, n, sum;
};
FERRY_TYPE(AddResponse);

namespace {

const std::string kConfig =
    "types:\n"
    "  AddRequest: { fields: [ {name: client, type: u64}, {name: n, type: u64}, "
    "{name: a, type: u64}, {name: b, type: u64} ] }\n"
    "  AddResponse: { fields: [ {name: client, type: u64}, {name: n, type: u64}, "
    "{name: sum, type: u64} ] }\n"
    "services:\n"
    "  - { name: calc/add, request: AddRequest, response: AddResponse, capacity: 4 }\n";
using Served = ferry::test::ServedDomain<kConfig>;

// The C peer program as a child process: a "server" that answers, or a
// "client" that makes, `calls` calls of calc/add.
Child c_peer(const char* role, const char* calls) {
  return Child([role, calls] {
    ::execl(FERRY_TEST_C_SERVICE_PEER, FERRY_TEST_C_SERVICE_PEER, role, calls, nullptr);
    return 127;
  });
}

}  // namespace

TEST_CASE_FIXTURE(Served, "a C server answers C++ calls") {
  Child server = c_peer("server", "101");
  ferry::Node node{"cpp-caller"};
  auto client = node.client<AddRequest, AddResponse>("calc/add");
  REQUIRE(client.wait_for_server(5s));
  for (std::uint64_t n = 0; n < 100; ++n) {
    auto r = client.call(AddRequest{1, n, n, 5}, 2s);
    REQUIRE(r);
    CHECK((*r)->n == n);
    CHECK((*r)->sum == n + 5);
  }
  auto none = client.call(AddRequest{1, 100, UINT64_MAX, 0}, 2s);
  REQUIRE(!none);
  CHECK(none.error() == ferry::ErrorCode::NoResponse);
  CHECK(server.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "a C client calls a C++ server") {
  Child caller = c_peer("client", "41");
  ferry::Node node{"cpp-server"};
  auto server = node.server<AddRequest, AddResponse>("calc/add");
  for (int n = 0; n < 41; ++n) {
    auto q = server.take_request(5s);
    REQUIRE(q);
    q->respond(AddResponse{(*q)->client, (*q)->n, (*q)->a + (*q)->b});
  }
  CHECK(caller.wait() == 0);
}

TEST_CASE_FIXTURE(Served, "C handles of the wrong types are refused, naming both") {
  ferry_node_t* node = nullptr;
  REQUIRE(ferry_node_create("c-wrong", nullptr, &node) == FERRY_OK);
  ferry_client_t* client = nullptr;
  CHECK(ferry_client_create(node, "calc/add", "AddRequest", 8, "AddResponse", sizeof(AddResponse),
                            &client) == FERRY_ERROR_REFUSED);
  CHECK(client == nullptr);
  CHECK(std::string(ferry_last_error()).find("AddRequest") != std::string::npos);
  ferry_server_t* server = nullptr;
  CHECK(ferry_server_create(node, "nope", "AddRequest", sizeof(AddRequest), "AddResponse",
                            sizeof(AddResponse), &server) == FERRY_ERROR_REFUSED);
  CHECK(std::string(ferry_last_error()).find("not declared") != std::string::npos);
  ferry_node_destroy(node);
}
