#pragma once
// Services (request/response, docs/services.md): how a declared service maps
// onto the topics that carry it. A service `S` travels on one request topic
// (every client publishes, its one server subscribes: one ring per client
// and server) and, per client, one response topic (the server publishes,
// that client subscribes). Their names live under a reserved prefix that
// declared topics may not use.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"

namespace ferry::config {

struct Config;
struct Topic;

struct Service {
  std::string name;
  std::string request;             // a declared type's name
  std::string response;            // a declared type's name
  std::size_t request_index = 0;   // into Config::schema.types()
  std::size_t response_index = 0;  // into Config::schema.types()
  std::uint32_t capacity = 8;      // calls in flight per client, a power of two
  std::uint32_t max_clients = 32;
  SourcePos pos;  // where the service is declared
};

// Topic names under this prefix carry services.
inline constexpr std::string_view kServicePrefix = "_srv/";
// A service name leaves room for the prefix and a response topic's suffix.
inline constexpr std::size_t kMaxServiceNameLength = 96;
inline constexpr std::uint32_t kMaxServiceCapacity = 32;
inline constexpr std::uint32_t kMaxServiceClients = 1024;

[[nodiscard]] bool is_valid_service_name(std::string_view name) noexcept;
// "_srv/<service>/rq": the topic of a service's requests.
[[nodiscard]] std::string service_request_topic(std::string_view service);
// "_srv/<service>/rr": the template of its response topics (ferryd makes
// each client's from it).
[[nodiscard]] std::string service_response_template(std::string_view service);
// "_srv/<service>/rr/<client>": the responses to one client (`client`: the
// id of the client's request publisher).
[[nodiscard]] std::string service_response_topic(std::string_view service, std::uint64_t client);

// What a service topic name says.
struct ServiceTopic {
  std::string service;
  bool request = false;  // the request topic
  bool response_template = false;
  std::uint64_t client = 0;  // a client's response topic: its id
};
// Nullopt for a topic that does not carry a service.
[[nodiscard]] std::optional<ServiceTopic> parse_service_topic(std::string_view topic);

// The topics a declared service needs: its request topic and its response
// template, with the settings that make them behave as a service
// (docs/services.md).
[[nodiscard]] std::vector<Topic> service_topics(const Config& config, const Service& service);

}  // namespace ferry::config
