#include "service_registry.hpp"

#include <fmt/format.h>

#include "ferry/config/limits.hpp"
#include "ferry/config/service.hpp"

namespace ferry::discovery {

namespace {
// An undeclared service's calls in flight per client (a declared one's
// `capacity` default).
constexpr std::uint32_t kUndeclaredCapacity = 8;
}  // namespace

std::optional<ServedTopic> service_topic_settings(
    const std::string& name, const TopicConfig& defaults,
    const std::function<const ServedTopic*(const std::string&)>& find) {
  const auto parsed = config::parse_service_topic(name);
  if (!parsed || parsed->response_template) return std::nullopt;
  ServedTopic s;
  if (parsed->client != 0) {
    if (const ServedTopic* templ = find(config::service_response_template(parsed->service))) {
      s = *templ;  // type, capacity, limits of the declared service
      s.declared = false;
      s.allow_publish.reset();
      s.allow_subscribe.reset();
    } else {
      s.config = defaults;  // an undeclared service: its first ports fix the types
      s.config.policy = Policy::DropOldest;
      s.config.capacity = 2 * kUndeclaredCapacity;
      s.config.limits.max_held = config::kMaxHeld;
      s.config.limits.max_loans = kUndeclaredCapacity;
    }
    s.config.limits.max_publishers = 1;   // the server
    s.config.limits.max_subscribers = 1;  // the client
  } else {
    s.config = defaults;  // an undeclared service's request topic
    s.config.policy = Policy::DropNew;
    s.config.capacity = kUndeclaredCapacity;
    s.config.limits.max_held = config::kMaxHeld;
    s.config.limits.max_loans = kUndeclaredCapacity;
    s.config.limits.max_subscribers = 1;
  }
  s.name = name;
  s.config.limits.history = 0;
  return s;
}

std::optional<Error> service_port_refusal(const ServedTopic& topic, bool publisher,
                                          std::size_t same_side_ports,
                                          const std::optional<ServingPort>& serving) {
  const auto parsed = config::parse_service_topic(topic.name);
  if (!parsed) return std::nullopt;
  if (parsed->response_template) {
    return make_error(RefusalCode::InvalidArgument,
                      fmt::format("topic '{}' is the template of service '{}''s response topics; "
                                  "no port may use it",
                                  topic.name, parsed->service));
  }
  if (!parsed->request) return std::nullopt;
  if (!publisher && same_side_ports >= 1) {
    return make_error(
        RefusalCode::LimitExceeded,
        fmt::format("service '{}' already has a server: node '{}' (pid {}) serves it; a service "
                    "has one server at a time",
                    parsed->service, serving ? serving->node : "?", serving ? serving->pid : 0));
  }
  if (publisher && same_side_ports >= topic.config.limits.max_publishers) {
    return make_error(
        RefusalCode::LimitExceeded,
        fmt::format("service '{}' already has {} clients, its max_clients is {}", parsed->service,
                    same_side_ports, topic.config.limits.max_publishers));
  }
  return std::nullopt;
}

}  // namespace ferry::discovery
