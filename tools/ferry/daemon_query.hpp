#pragma once
// The CLI's questions to ferryd.

#include <vector>

#include "cli_context.hpp"
#include "ferry/discovery/client.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::cli {

// Connects as a node named "ferry-cli"; an unreachable daemon is a Failure
// (exit 1) naming the socket and how to start ferryd.
discovery::Client connect_daemon(const Context& context);

// Every topic (or only `topic`), following the daemon's pages.
std::vector<discovery::TopicInfo> list_topics(discovery::Client& client, const std::string& topic = {});

}  // namespace ferry::cli
