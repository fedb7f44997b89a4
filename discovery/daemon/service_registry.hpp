#pragma once
// Services in ferryd's registry (docs/services.md). A service travels on
// topics under a reserved prefix (ferry/config/service.hpp): its request
// topic, which its one server subscribes and its clients publish, and one
// response topic per client, made from the service's response template when
// the client asks for it. These rules are the registry's hooks: the rest
// (rings, matching, reclaim after a death, adoption after a restart) is the
// topics' own.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "registry.hpp"

namespace ferry::discovery {

// The settings of a service topic that is not served yet: a client's
// response topic from its service's template (`find` looks a served topic
// up by name), or an undeclared service's topics from `defaults`. Nullopt:
// `name` is not a service topic (then the usual rules apply).
[[nodiscard]] std::optional<ServedTopic> service_topic_settings(
    const std::string& name, const TopicConfig& defaults,
    const std::function<const ServedTopic*(const std::string&)>& find);

// A port's refusal by the rules of services: a second server (naming the
// node that serves), a client over max_clients, a port on a response
// template. `serving` names the node and pid of the port that serves now
// (the request topic's subscriber), when there is one.
struct ServingPort {
  std::string node;
  std::int32_t pid = 0;
};
[[nodiscard]] std::optional<Error> service_port_refusal(const ServedTopic& topic, bool publisher,
                                                        std::size_t same_side_ports,
                                                        const std::optional<ServingPort>& serving);

}  // namespace ferry::discovery
