#pragma once
// The CLI's questions to ferryd.

#include <string>
#include <vector>

#include "cli_context.hpp"
#include "ferry/config/config.hpp"
#include "ferry/discovery/client.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::cli {

// Connects as a node named "ferry-cli"; an unreachable daemon is a Failure
// (exit 1) naming the socket and how to start ferryd.
discovery::Client connect_daemon(const Context& context);

// Every topic (or only `topic`), following the daemon's pages.
std::vector<discovery::TopicInfo> list_topics(discovery::Client& client,
                                              const std::string& topic = {});

// The topic, or a Failure (exit 1) saying it is unknown in the domain.
discovery::TopicInfo find_topic(discovery::Client& client, const std::string& topic);

// The topic's subscribers that are observers (tools such as `topic echo`),
// or those that are not (the topic's real subscribers).
std::vector<discovery::PortInfo> subscribers_of(const discovery::TopicInfo& topic, bool observers);

// Every node but the asking one (the CLI itself), following the pages.
std::vector<discovery::NodeInfo> list_nodes(discovery::Client& client);

// The configuration ferryd serves, parsed (its types give the samples'
// layout). A Failure (exit 1) when it cannot be fetched or read.
config::Config fetch_config(discovery::Client& client);

}  // namespace ferry::cli
