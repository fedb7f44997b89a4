#pragma once
// The request and response types of the service tests, and the YAML that
// declares them.
#include <cstdint>
#include <ferry/ferry.hpp>
#include <string>

struct AddRequest {
  std::uint64_t client;
  std::uint64_t n;
  std::uint64_t a;
  std::uint64_t b;
};
FERRY_TYPE(AddRequest);

struct AddResponse {
  std::uint64_t client;
  std::uint64_t n;
  std::uint64_t sum;
};
FERRY_TYPE(AddResponse);

// Too large for a ring slot: travels through the pool.
struct BigResponse {
  std::uint64_t n;
  std::uint8_t bytes[8192];
};
FERRY_TYPE(BigResponse);

inline AddResponse answer(const AddRequest& q) { return AddResponse{q.client, q.n, q.a + q.b}; }

inline std::string service_config(const std::string& extra = "") {
  return "liveness: { heartbeat_ms: 50, timeout_ms: 1000 }\n"
         "types:\n"
         "  AddRequest:\n"
         "    fields:\n"
         "      - { name: client, type: u64 }\n"
         "      - { name: n, type: u64 }\n"
         "      - { name: a, type: u64 }\n"
         "      - { name: b, type: u64 }\n"
         "  AddResponse:\n"
         "    fields:\n"
         "      - { name: client, type: u64 }\n"
         "      - { name: n, type: u64 }\n"
         "      - { name: sum, type: u64 }\n"
         "  BigResponse:\n"
         "    fields:\n"
         "      - { name: n, type: u64 }\n"
         "      - { name: bytes, type: \"u8[8192]\" }\n"
         "topics:\n"
         "  - { name: plain, type: AddRequest }\n"
         "services:\n"
         "  - { name: calc/add, request: AddRequest, response: AddResponse, capacity: 8, "
         "max_clients: 8 }\n"
         "  - { name: calc/big, request: AddRequest, response: BigResponse, capacity: 8, "
         "max_clients: 4 }\n" +
         extra;
}
