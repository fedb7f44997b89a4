#include "service_ports.hpp"

#include "ferry/config/service.hpp"

namespace ferry::cli {

std::optional<ServiceRole> service_role(const std::string& topic, bool publisher) {
  const auto parsed = config::parse_service_topic(topic);
  if (!parsed) return std::nullopt;
  ServiceRole role;
  role.service = parsed->service;
  role.server = parsed->request ? !publisher : publisher;
  role.hidden = !parsed->request;
  return role;
}

bool is_service_topic(const std::string& topic) {
  return topic.starts_with(config::kServicePrefix);
}

std::string display_name(const std::string& topic) {
  const auto parsed = config::parse_service_topic(topic);
  if (parsed && parsed->request) return "service " + parsed->service;
  return topic;
}

std::vector<ServiceView> services_of(const std::vector<discovery::TopicInfo>& topics) {
  std::vector<ServiceView> out;
  for (const auto& t : topics) {
    const auto parsed = config::parse_service_topic(t.name);
    if (!parsed || !parsed->request) continue;
    ServiceView v;
    v.name = parsed->service;
    v.request_type = t.type_name;
    v.capacity = t.capacity;
    for (const auto& s : t.subscribers) {
      if (!s.observer) v.server = s;
    }
    v.clients = t.publishers;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace ferry::cli
