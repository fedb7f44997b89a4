// ferry topic ...: the topics of a running domain.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

void topic_list(const Context& context, bool json) {
  auto client = connect_daemon(context);
  const auto topics = list_topics(client);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : topics) {
      out.push_back({{"name", t.name},
                     {"type", t.type_name},
                     {"policy", std::string(discovery::to_string(t.policy))},
                     {"capacity", t.capacity},
                     {"sample_size", t.sample_size},
                     {"publishers", t.publishers.size()},
                     {"subscribers", t.subscribers.size()}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  Table table({"TOPIC", "TYPE", "POLICY", "CAPACITY", "PUBS", "SUBS"});
  for (const auto& t : topics) {
    table.add({t.name, t.type_name, std::string(discovery::to_string(t.policy)),
               std::to_string(t.capacity), std::to_string(t.publishers.size()),
               std::to_string(t.subscribers.size())});
  }
  std::fputs(table.render().c_str(), stdout);
}

}  // namespace

void add_topic_commands(CLI::App& app, Context& context) {
  auto* topic = app.add_subcommand("topic", "Inspect the topics of a running domain");
  topic->require_subcommand(1);

  auto* list = topic->add_subcommand("list", "List topics: type, policy, capacity, port counts");
  auto json = std::make_shared<bool>(false);
  list->add_flag("--json", *json, "Print a JSON array");
  list->footer("Examples:\n  ferry topic list\n  ferry --domain demo topic list --json");
  list->callback([&context, json] { topic_list(context, *json); });
}

}  // namespace ferry::cli
