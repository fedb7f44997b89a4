#include "daemon_query.hpp"

#include <fmt/format.h>

namespace ferry::cli {

namespace {
constexpr std::chrono::milliseconds kTimeout{3000};
}

discovery::Client connect_daemon(const Context& context) {
  auto client = discovery::Client::connect(context.domain(), "ferry-cli", kTimeout);
  if (!client) throw Failure(kExitRuntime, client.error());
  return std::move(*client);
}

std::vector<discovery::TopicInfo> list_topics(discovery::Client& client, const std::string& topic) {
  std::vector<discovery::TopicInfo> topics;
  std::uint32_t start = 0;
  while (true) {
    auto reply = client.request(discovery::ListTopics{start, topic}, kTimeout);
    if (!reply) throw Failure(kExitRuntime, reply.error());
    if (const auto* error = std::get_if<discovery::Error>(&*reply)) {
      throw Failure(kExitRuntime, error->message);
    }
    const auto* page = std::get_if<discovery::TopicList>(&*reply);
    if (page == nullptr) throw Failure(kExitRuntime, "ferryd answered the topic list with something else");
    for (const auto& t : page->topics) topics.push_back(t);
    start += static_cast<std::uint32_t>(page->topics.size());
    if (page->topics.empty() || start >= page->total) break;
  }
  return topics;
}

}  // namespace ferry::cli
