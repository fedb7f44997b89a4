#pragma once
// QoS mismatches with the DDS endpoints a bridge finds (docs/bridge.md,
// "QoS"): each is reported by topic and policy name, as ROS 2 does; an
// import adapts its reader to the writers it finds, the way rosbag2 adapts
// its subscriptions: it requests TRANSIENT_LOCAL (RELIABLE) only while every
// writer offers it, so one writer that offers VOLATILE (BEST_EFFORT) makes
// the import ask for that instead of matching none of its samples.

#include <dds/dds.h>

#include <cstdint>
#include <optional>
#include <string>

#include "qos.hpp"

namespace ferry::bridge {

// "DURABILITY_QOS_POLICY", as ROS 2 names a policy in its messages.
[[nodiscard]] std::string qos_policy_name(std::uint32_t policy_id);

// What an import's reader requests: the topic's QoS, never reading what
// the bridge's own participant writes.
[[nodiscard]] QosPtr import_reader_qos(const config::TopicSettings& settings);

// Watches one import's reader (polled by the bridge's main loop).
class ImportQos {
 public:
  ImportQos(std::string topic, QosPtr requested)
      : topic_(std::move(topic)), requested_(std::move(requested)) {}

  // Reports the writers that became incompatible since the last call;
  // when the reader asks for more durability or reliability than one of
  // them offers, the QoS to create its reader with instead (the caller
  // replaces the reader, then calls adopted()).
  [[nodiscard]] std::optional<QosPtr> check(dds_entity_t reader);
  void adopted(QosPtr qos) { requested_ = std::move(qos); }
  [[nodiscard]] const dds_qos_t* requested() const noexcept { return requested_.get(); }

 private:
  std::string topic_;
  QosPtr requested_;
};

// Reports the DDS readers that became incompatible with an export's writer
// since the last call (it keeps its QoS: it is the topic's).
void report_offered_incompatible(const std::string& topic, dds_entity_t writer);

}  // namespace ferry::bridge
