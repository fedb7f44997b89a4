// Node::server / Node::client: a service's ports on its topics
// (ferry/config/service.hpp, docs/services.md).
#include <fmt/format.h>

#include "ferry/config/service.hpp"
#include "ferry/node.hpp"
#include "node_runtime.hpp"
#include "port_state.hpp"

namespace ferry {

namespace {

void check_service_name(std::string_view service) {
  if (!config::is_valid_service_name(service)) {
    throw Error(
        fmt::format("'{}' is not a valid service name: use letters, digits and _ / . - (at most {} "
                    "characters), with no leading, trailing or doubled '/' and no leading '{}'",
                    service, config::kMaxServiceNameLength, config::kServicePrefix));
  }
}

// How long a server waits for a new client's response queue to be matched
// (it exists before the client's first call: normally a few round trips).
constexpr std::chrono::milliseconds kResponderMatchTimeout{1000};

}  // namespace

std::unique_ptr<detail::ServerCore> Node::make_server(std::string_view service,
                                                      const detail::TypeInfo& request,
                                                      const detail::TypeInfo& response) {
  check_service_name(service);
  auto requests = make_subscriber(config::service_request_topic(service), request, {});
  auto runtime = runtime_;
  const std::string name(service);
  auto make_responder = [runtime, name, response](std::uint64_t client) {
    return std::make_unique<detail::PublisherPort>(
        runtime, runtime->create_publisher(config::service_response_topic(name, client), response));
  };
  return std::make_unique<detail::ServerCore>(name, std::move(requests), std::move(make_responder),
                                              kResponderMatchTimeout);
}

std::unique_ptr<detail::ClientCore> Node::make_client(std::string_view service,
                                                      const detail::TypeInfo& request,
                                                      const detail::TypeInfo& response) {
  check_service_name(service);
  // The request publisher first: its id names this client's response topic.
  auto requests = make_publisher(config::service_request_topic(service), request);
  auto responses = make_subscriber(
      config::service_response_topic(service, requests->publisher_id()), response, {});
  const std::uint32_t capacity = requests->capacity();
  return std::make_unique<detail::ClientCore>(std::string(service), std::move(requests),
                                              std::move(responses), capacity);
}

}  // namespace ferry
