#include "import_qos.hpp"

#include <spdlog/spdlog.h>

#include <array>

namespace ferry::bridge {

std::string qos_policy_name(std::uint32_t id) {
  // In the order of dds_qos_policy_id_t.
  static constexpr std::array<const char*, 26> kNames = {"INVALID",
                                                         "USER_DATA",
                                                         "DURABILITY",
                                                         "PRESENTATION",
                                                         "DEADLINE",
                                                         "LATENCY_BUDGET",
                                                         "OWNERSHIP",
                                                         "OWNERSHIP_STRENGTH",
                                                         "LIVELINESS",
                                                         "TIME_BASED_FILTER",
                                                         "PARTITION",
                                                         "RELIABILITY",
                                                         "DESTINATION_ORDER",
                                                         "HISTORY",
                                                         "RESOURCE_LIMITS",
                                                         "ENTITY_FACTORY",
                                                         "WRITER_DATA_LIFECYCLE",
                                                         "READER_DATA_LIFECYCLE",
                                                         "TOPIC_DATA",
                                                         "GROUP_DATA",
                                                         "TRANSPORT_PRIORITY",
                                                         "LIFESPAN",
                                                         "DURABILITY_SERVICE",
                                                         "PROPERTY",
                                                         "TYPE_CONSISTENCY_ENFORCEMENT",
                                                         "DATA_REPRESENTATION"};
  if (id >= kNames.size()) return "policy " + std::to_string(id);
  return std::string(kNames[id]) + "_QOS_POLICY";
}

QosPtr import_reader_qos(const config::TopicSettings& settings) {
  QosPtr q = topic_qos(settings);
  // What this participant writes is its own export: never read back.
  dds_qset_ignorelocal(q.get(), DDS_IGNORELOCAL_PARTICIPANT);
  return q;
}

std::optional<QosPtr> ImportQos::check(dds_entity_t reader) {
  dds_requested_incompatible_qos_status_t st{};
  if (dds_get_requested_incompatible_qos_status(reader, &st) != DDS_RETCODE_OK ||
      st.total_count_change == 0)
    return std::nullopt;
  const std::string policy = qos_policy_name(st.last_policy_id);
  spdlog::warn(
      "bridge: import '{}': a DDS writer on 'rt/{}' offers incompatible QoS; no samples come from "
      "it ({} so far). Last incompatible policy: {}",
      topic_, topic_, st.total_count, policy);
  QosPtr relaxed(dds_create_qos());
  (void)dds_copy_qos(relaxed.get(), requested_.get());
  if (st.last_policy_id == DDS_DURABILITY_QOS_POLICY_ID) {
    dds_durability_kind_t kind = DDS_DURABILITY_VOLATILE;
    if (!dds_qget_durability(requested_.get(), &kind) || kind == DDS_DURABILITY_VOLATILE)
      return std::nullopt;
    dds_qset_durability(relaxed.get(), DDS_DURABILITY_VOLATILE);
    spdlog::warn(
        "bridge: import '{}' now requests VOLATILE durability: not every DDS writer offers "
        "TRANSIENT_LOCAL (its reader adapts to the writers it finds, as rosbag2 does); local "
        "subscribers still get the topic's history from this bridge",
        topic_);
    return relaxed;
  }
  if (st.last_policy_id == DDS_RELIABILITY_QOS_POLICY_ID) {
    dds_reliability_kind_t kind = DDS_RELIABILITY_BEST_EFFORT;
    dds_duration_t blocking = 0;
    if (!dds_qget_reliability(requested_.get(), &kind, &blocking) ||
        kind == DDS_RELIABILITY_BEST_EFFORT)
      return std::nullopt;
    dds_qset_reliability(relaxed.get(), DDS_RELIABILITY_BEST_EFFORT, blocking);
    spdlog::warn(
        "bridge: import '{}' now requests BEST_EFFORT reliability: not every DDS writer offers "
        "RELIABLE (its reader adapts to the writers it finds, as rosbag2 does)",
        topic_);
    return relaxed;
  }
  return std::nullopt;
}

void report_offered_incompatible(const std::string& topic, dds_entity_t writer) {
  dds_offered_incompatible_qos_status_t st{};
  if (dds_get_offered_incompatible_qos_status(writer, &st) != DDS_RETCODE_OK ||
      st.total_count_change == 0)
    return;
  spdlog::warn(
      "bridge: export '{}': a DDS reader on 'rt/{}' requests incompatible QoS; no samples go to "
      "it ({} so far). Last incompatible policy: {}",
      topic, topic, st.total_count, qos_policy_name(st.last_policy_id));
}

}  // namespace ferry::bridge
