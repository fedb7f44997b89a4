#pragma once
// What Python knows about a topic's samples: its type from the configuration
// ferryd serves (as `ferry topic echo` learns it), and the numpy dtype built
// from that type.

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <string>

#include "ferry/config/config.hpp"

namespace ferry::python {

struct TopicSchema {
  std::string topic;
  std::string type_name;  // the topic's type as ferryd names it ("bytes" for bytes topics)
  std::shared_ptr<const config::Config> config;  // owns `type`
  // The declared struct type; null for bytes topics, opaque types and types
  // the configuration does not declare (samples are then read as bytes).
  const config::Type* type = nullptr;
  bool bytes = false;      // a `type: bytes` topic
  std::size_t size = 0;    // the sample size (0: bytes topic)
  pybind11::object dtype;  // numpy dtype of `type`; None when `type` is null
};

// Asks the domain's ferryd (a short connection of its own) for its
// configuration and the topic's type (type_name stays empty for a topic that
// is neither declared nor used yet). Throws ferry::Error with ferryd's
// sentence when it cannot be asked.
[[nodiscard]] TopicSchema describe_topic(const std::string& domain, const std::string& topic);

// The schema for a port of `sample_size` bytes (the port's: what the rings
// carry): the declared type and its dtype when their size matches, else the
// samples are read as bytes.
[[nodiscard]] std::shared_ptr<const TopicSchema> for_port(TopicSchema described,
                                                          std::size_t sample_size);

}  // namespace ferry::python
