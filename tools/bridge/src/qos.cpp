#include "qos.hpp"

namespace ferry::bridge {

QosPtr topic_qos(const config::TopicSettings& s) {
  QosPtr q(dds_create_qos());
  const bool block = s.policy == config::Policy::Block;
  dds_qset_reliability(q.get(), DDS_RELIABILITY_RELIABLE,
                       block ? DDS_MSECS(s.block_timeout_ms) : DDS_MSECS(100));
  if (block) {
    dds_qset_history(q.get(), DDS_HISTORY_KEEP_ALL, 0);
  } else {
    dds_qset_history(q.get(), DDS_HISTORY_KEEP_LAST, static_cast<int32_t>(s.capacity));
  }
  if (s.history > 0) {
    // A late reader gets the last N: the writer keeps them (durability
    // service depth), whatever its history for live readers.
    dds_qset_durability(q.get(), DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_durability_service(q.get(), 0, DDS_HISTORY_KEEP_LAST, static_cast<int32_t>(s.history),
                                DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  }
  return q;
}

}  // namespace ferry::bridge
