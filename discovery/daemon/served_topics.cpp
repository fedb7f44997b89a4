#include "served_topics.hpp"

#include "ferry/discovery/limits.hpp"

namespace ferry::discovery {

static_assert(kMaxTypeLayout == config::kMaxLayoutFingerprint,
              "a fingerprint ferry gen writes must fit the wire");

TopicConfig to_topic_config(const config::TopicSettings& s) {
  TopicConfig c;
  c.policy = s.policy;
  c.capacity = s.capacity;
  c.block_timeout_ms = s.block_timeout_ms;
  c.limits.max_publishers = s.max_publishers;
  c.limits.max_subscribers = s.max_subscribers;
  c.limits.max_loans = s.max_loans;
  c.limits.max_held = s.max_held;
  c.limits.history = s.history;
  return c;
}

std::vector<ServedTopic> served_topics(const config::Config& config) {
  std::vector<ServedTopic> served;
  // A service travels on topics of its own (ferry/config/service.hpp).
  std::vector<config::Topic> topics = config.topics;
  for (const config::Service& service : config.services) {
    for (config::Topic& t : config::service_topics(config, service)) topics.push_back(std::move(t));
  }
  for (const config::Topic& t : topics) {
    ServedTopic s;
    s.name = t.name;
    s.declared = true;
    s.bytes = t.is_bytes();
    s.type_name = t.is_bytes() ? std::string("ferry::Bytes") : t.type;
    s.type_size = t.is_bytes() ? 0 : t.sample_size;
    s.type_align = t.is_bytes() ? 1 : static_cast<std::uint32_t>(t.sample_align);
    if (t.type_index) {
      s.type_layout = config::layout_fingerprint(config.schema, *t.type_index).value_or("");
    }
    s.config = to_topic_config(t.settings);
    if (t.is_bytes()) {
      s.config.max_size = t.sample_size;
    } else {
      s.config.sample_size = t.sample_size;
    }
    if (t.allow.publish) s.allow_publish.emplace(t.allow.publish->begin(), t.allow.publish->end());
    if (t.allow.subscribe) {
      s.allow_subscribe.emplace(t.allow.subscribe->begin(), t.allow.subscribe->end());
    }
    served.push_back(std::move(s));
  }
  return served;
}

}  // namespace ferry::discovery
