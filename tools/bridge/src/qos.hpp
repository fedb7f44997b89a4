#pragma once
// A ferry topic's settings as DDS QoS (docs/bridge.md): block -> RELIABLE,
// KEEP_ALL, max_blocking_time = block_timeout_ms; drop_new / drop_oldest ->
// RELIABLE, KEEP_LAST(capacity); history: N -> TRANSIENT_LOCAL, depth N.

#include <dds/dds.h>

#include <memory>

#include "ferry/config/config.hpp"

namespace ferry::bridge {

struct QosDelete {
  void operator()(dds_qos_t* q) const noexcept { dds_delete_qos(q); }
};
using QosPtr = std::unique_ptr<dds_qos_t, QosDelete>;

// For the topic, its writer and its reader alike.
[[nodiscard]] QosPtr topic_qos(const config::TopicSettings& settings);

}  // namespace ferry::bridge
