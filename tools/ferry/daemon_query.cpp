#include "daemon_query.hpp"

#include <fmt/format.h>

#include "ferry/discovery/queries.hpp"

namespace ferry::cli {

namespace {
constexpr std::chrono::milliseconds kTimeout{3000};

// Sends `request`; the reply must be a `Reply` (anything else is a Failure).
template <class Reply>
Reply ask(discovery::Client& client, const discovery::Message& request, std::string_view what) {
  auto answer = discovery::ask<Reply>(client, request, what, kTimeout);
  if (!answer) throw Failure(kExitRuntime, answer.error());
  return std::move(*answer);
}
}  // namespace

discovery::Client connect_daemon(const Context& context) {
  auto client = discovery::Client::connect(context.domain(), "ferry-cli", kTimeout);
  if (!client) throw Failure(kExitRuntime, client.error());
  return std::move(*client);
}

std::vector<discovery::TopicInfo> list_topics(discovery::Client& client, const std::string& topic) {
  std::vector<discovery::TopicInfo> topics;
  std::uint32_t start = 0;
  std::uint32_t part = 0;  // items of topic `start` already received
  // Each page makes progress (a topic or an item at least); the bound only
  // guards against a daemon that answers in circles.
  for (int pages = 0; pages < 1'000'000; ++pages) {
    const auto page =
        ask<discovery::TopicList>(client, discovery::ListTopics{start, topic, part}, "topic list");
    for (std::size_t i = 0; i < page.topics.size(); ++i) {
      const auto& t = page.topics[i];
      if (i == 0 && part > 0 && !topics.empty() && topics.back().name == t.name) {
        // The rest of the topic the previous page cut.
        auto& into = topics.back();
        into.publishers.insert(into.publishers.end(), t.publishers.begin(), t.publishers.end());
        into.subscribers.insert(into.subscribers.end(), t.subscribers.begin(), t.subscribers.end());
        into.queues.insert(into.queues.end(), t.queues.begin(), t.queues.end());
      } else {
        topics.push_back(t);
      }
    }
    if (page.topics.empty()) break;
    if (page.next_part != 0) {
      if (page.next_part <= part && page.topics.size() == 1) {
        throw Failure(kExitRuntime, "ferryd answered the topic list request out of order");
      }
      start += static_cast<std::uint32_t>(page.topics.size() - 1);
      part = page.next_part;
      continue;
    }
    start += static_cast<std::uint32_t>(page.topics.size());
    part = 0;
    if (start >= page.total) break;
  }
  return topics;
}

discovery::TopicInfo find_topic(discovery::Client& client, const std::string& topic) {
  auto found = list_topics(client, topic);
  if (found.empty()) {
    throw Failure(kExitRuntime,
                  fmt::format("topic '{}' is unknown in domain '{}' (not declared and no port uses "
                              "it); 'ferry topic list' shows the topics",
                              topic, client.welcome().domain));
  }
  return found.front();
}

std::vector<discovery::NodeInfo> list_nodes(discovery::Client& client) {
  std::vector<discovery::NodeInfo> nodes;
  std::uint32_t start = 0;
  while (true) {
    const auto page = ask<discovery::NodeList>(client, discovery::ListNodes{start}, "node list");
    for (const auto& n : page.nodes) {
      if (n.node_id != client.welcome().node_id) nodes.push_back(n);
    }
    start += static_cast<std::uint32_t>(page.nodes.size());
    if (page.nodes.empty() || start >= page.total) break;
  }
  return nodes;
}

config::Config fetch_config(discovery::Client& client) {
  auto config = discovery::fetch_config(client, kTimeout);
  if (!config) throw Failure(kExitRuntime, config.error());
  return std::move(*config);
}

std::vector<discovery::PortInfo> subscribers_of(const discovery::TopicInfo& topic, bool observers) {
  std::vector<discovery::PortInfo> out;
  for (const auto& p : topic.subscribers) {
    if (p.observer == observers) out.push_back(p);
  }
  return out;
}

}  // namespace ferry::cli
