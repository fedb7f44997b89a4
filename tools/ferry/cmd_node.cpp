// ferry node list: the nodes of a running domain with their pid, heartbeat
// age and ports.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "format.hpp"
#include "sample_codec.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

std::string topics_of(const discovery::NodeInfo& n) {
  std::string out;
  for (const auto& p : n.publishers) out += fmt::format("{}pub {}", out.empty() ? "" : ", ", p.topic);
  for (const auto& p : n.subscribers) out += fmt::format("{}sub {}", out.empty() ? "" : ", ", p.topic);
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
    table.add({n.name, std::to_string(n.pid), human_millis(n.heartbeat_age_ms), human_millis(n.connected_ms),
               std::to_string(n.publishers.size()), std::to_string(n.subscribers.size()), topics_of(n)});
  }
  std::fputs(table.render().c_str(), stdout);
}

}  // namespace

void add_node_commands(CLI::App& app, Context& context) {
  auto* node = app.add_subcommand("node", "Inspect the nodes of a running domain");
  node->require_subcommand(1);
  auto* list = node->add_subcommand("list", "List nodes: pid, heartbeat age, uptime, ports");
  auto json = std::make_shared<bool>(false);
  list->add_flag("--json", *json, "Print a JSON array");
  list->footer("HEARTBEAT is the age of the node's last heartbeat as ferryd saw it; UP is the time\n"
               "since it joined. The asking ferry itself is not listed.\n"
               "Examples:\n  ferry node list\n  ferry --domain demo node list --json");
  list->callback([&context, json] { node_list(context, *json); });
}

}  // namespace ferry::cli
