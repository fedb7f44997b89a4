#pragma once
// A topic's sample layout, from the configuration ferryd serves.

#include <string>

#include "ferry/config/config.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::cli {

struct TopicType {
  // The declared type (struct or opaque); nullptr for `bytes` topics and
  // for types the configuration does not declare (an undeclared topic typed
  // by its first port's C++ type): their samples are shown as bytes.
  const config::Type* type = nullptr;
  bool bytes = false;  // a `type: bytes` topic
};

[[nodiscard]] TopicType resolve_type(const config::Config& config,
                                     const discovery::TopicInfo& topic);

}  // namespace ferry::cli
