#pragma once
// How the CLI shows the topics that carry services (ferry/config/service.hpp):
// as services, their servers and their clients, never as raw topics.

#include <optional>
#include <string>
#include <vector>

#include "ferry/discovery/messages.hpp"

namespace ferry::cli {

// A port on a service topic, as `ferry node list` and `top` name it:
// "serves S" (the request topic's subscriber), "client S" (its publisher);
// nullopt for a port on a plain topic. Ports on response topics are the
// service's own plumbing: `hidden` says so.
struct ServiceRole {
  std::string service;
  bool server = false;
  bool hidden = false;
};
[[nodiscard]] std::optional<ServiceRole> service_role(const std::string& topic, bool publisher);

// Whether a topic carries a service (and is left out of `ferry topic list`).
[[nodiscard]] bool is_service_topic(const std::string& topic);

// A topic as `ferry top` lists it: a service's request topic as
// "service S" (its rate is the calls per second), others by name.
[[nodiscard]] std::string display_name(const std::string& topic);

// A service as ferryd serves it now, from its request topic.
struct ServiceView {
  std::string name;
  std::string request_type;
  std::uint32_t capacity = 0;
  std::optional<discovery::PortInfo> server;
  std::vector<discovery::PortInfo> clients;
};
[[nodiscard]] std::vector<ServiceView> services_of(const std::vector<discovery::TopicInfo>& topics);

}  // namespace ferry::cli
