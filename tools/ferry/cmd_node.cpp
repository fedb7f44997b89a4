// ferry node list: the nodes of a running domain with their pid, heartbeat
// age and ports.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "format.hpp"
#include "sample_codec.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

std::string ports_text(const discovery::NodeInfo& n) {
  std::string out;
  for (const auto& p : n.publishers)
    out += fmt::format("{}pub {}", out.empty() ? "" : ", ", p.topic);
  for (const auto& p : n.subscribers)
    out += fmt::format("{}sub {}", out.empty() ? "" : ", ", p.topic);
  return out;
}

void node_list(const Context& context, bool json) {
  auto client = connect_daemon(context);
  const auto nodes = list_nodes(client);
  if (json) {
    Json out = Json::array();
    for (const auto& n : nodes) {
      Json ports = Json::array();
      for (const auto& p : n.publishers) {
        ports.push_back({{"port_id", p.port_id}, {"topic", p.topic}, {"direction", "publish"}});
      }
      for (const auto& p : n.subscribers) {
        ports.push_back({{"port_id", p.port_id}, {"topic", p.topic}, {"direction", "subscribe"}});
      }
      out.push_back({{"name", n.name},
                     {"pid", n.pid},
                     {"node_id", n.node_id},
                     {"heartbeat_age_ms", n.heartbeat_age_ms},
                     {"connected_ms", n.connected_ms},
                     {"publishers", n.publishers.size()},
                     {"subscribers", n.subscribers.size()},
                     {"ports", std::move(ports)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  Table table({"NODE", "PID", "HEARTBEAT", "UP", "PUBS", "SUBS", "TOPICS"});
  for (const auto& n : nodes) {
    table.add({n.name, std::to_string(n.pid), human_millis(n.heartbeat_age_ms),
               human_millis(n.connected_ms), std::to_string(n.publishers.size()),
               std::to_string(n.subscribers.size()), ports_text(n)});
  }
  std::fputs(table.render().c_str(), stdout);
}

}  // namespace

int run_node_list(const NodeListOptions& o, const Context& context) {
  node_list(context, o.json);
  return kExitOk;
}

}  // namespace ferry::cli
