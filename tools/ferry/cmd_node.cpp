// ferry node list: the nodes of a running domain with their pid, heartbeat
// age and ports.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "format.hpp"
#include "sample_codec.hpp"
#include "service_ports.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

// A node's ports on plain topics, then the services it serves and calls
// (their topics are not shown: docs/services.md).
std::string ports_text(const discovery::NodeInfo& n) {
  std::string out;
  std::string services;
  auto add = [&](const discovery::NodePortInfo& p, bool publisher) {
    if (auto role = service_role(p.topic, publisher)) {
      if (!role->hidden)
        services += fmt::format(", {} {}", role->server ? "serves" : "client", role->service);
      return;
    }
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", publisher ? "pub" : "sub", p.topic);
  };
  for (const auto& p : n.publishers) add(p, true);
  for (const auto& p : n.subscribers) add(p, false);
  if (out.empty() && !services.empty()) return services.substr(2);
  return out + services;
}

// The names of the services a node serves (server) or calls.
Json services_json(const discovery::NodeInfo& n, bool server) {
  Json out = Json::array();
  for (const auto& p : server ? n.subscribers : n.publishers) {
    if (auto role = service_role(p.topic, !server); role && !role->hidden)
      out.push_back(role->service);
  }
  return out;
}

std::size_t topic_ports(const std::vector<discovery::NodePortInfo>& ports) {
  return static_cast<std::size_t>(
      std::ranges::count_if(ports, [](const auto& p) { return !is_service_topic(p.topic); }));
}

void node_list(const Context& context, bool json) {
  auto client = connect_daemon(context);
  const auto nodes = list_nodes(client);
  if (json) {
    Json out = Json::array();
    for (const auto& n : nodes) {
      Json ports = Json::array();
      for (const auto& p : n.publishers) {
        if (is_service_topic(p.topic)) continue;
        ports.push_back({{"port_id", p.port_id}, {"topic", p.topic}, {"direction", "publish"}});
      }
      for (const auto& p : n.subscribers) {
        if (is_service_topic(p.topic)) continue;
        ports.push_back({{"port_id", p.port_id}, {"topic", p.topic}, {"direction", "subscribe"}});
      }
      out.push_back({{"name", n.name},
                     {"pid", n.pid},
                     {"node_id", n.node_id},
                     {"heartbeat_age_ms", n.heartbeat_age_ms},
                     {"connected_ms", n.connected_ms},
                     {"publishers", topic_ports(n.publishers)},
                     {"subscribers", topic_ports(n.subscribers)},
                     {"ports", std::move(ports)},
                     {"servers", services_json(n, true)},
                     {"clients", services_json(n, false)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  Table table({"NODE", "PID", "HEARTBEAT", "UP", "PUBS", "SUBS", "TOPICS"});
  for (const auto& n : nodes) {
    table.add({n.name, std::to_string(n.pid), human_millis(n.heartbeat_age_ms),
               human_millis(n.connected_ms), std::to_string(topic_ports(n.publishers)),
               std::to_string(topic_ports(n.subscribers)), ports_text(n)});
  }
  std::fputs(table.render().c_str(), stdout);
}

}  // namespace

int run_node_list(const NodeListOptions& o, const Context& context) {
  node_list(context, o.json);
  return kExitOk;
}

}  // namespace ferry::cli
