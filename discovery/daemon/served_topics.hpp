#pragma once
// From the loaded YAML to the topics ferryd serves.

#include <vector>

#include "ferry/config/config.hpp"
#include "ferry/config/layout_fingerprint.hpp"
#include "registry.hpp"

namespace ferry::discovery {

[[nodiscard]] TopicConfig to_topic_config(const config::TopicSettings& settings);
[[nodiscard]] std::vector<ServedTopic> served_topics(const config::Config& config);

}  // namespace ferry::discovery
