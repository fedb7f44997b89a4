// Local -> DDS. Cyclone serializes straight from the sample in the shared
// pool (the descriptor's ops read the ferry layout), so a sample is copied
// once, into the DDS message.
#include <spdlog/spdlog.h>

#include "topic_link.hpp"

namespace ferry::bridge {

namespace {
constexpr auto kPoll = std::chrono::milliseconds(100);
}

void run_export(BridgedTopic& t, RawSubscriber& subscriber, dds_entity_t writer,
                const std::atomic<bool>& stop) {
  const bool bytes = t.topic->is_bytes();
  // SYNC: relaxed; pairs with the relaxed store in run(): a stop flag only.
  while (!stop.load(std::memory_order_relaxed)) {
    auto sample = subscriber.take(kPoll);
    if (!sample) continue;
    if (t.importer_id && sample->info().publisher_id == *t.importer_id) {
      // SYNC: relaxed; a statistic (see LinkCounters).
      t.counts.echoes.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    dds_return_t rc;
    if (bytes) {
      // Cyclone only reads the buffer it is lent here.
      dds_sequence_t seq{};
      seq._maximum = seq._length = static_cast<std::uint32_t>(sample->size());
      seq._buffer =
          const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(sample->data()));
      seq._release = false;
      rc = dds_write(writer, &seq);
    } else {
      rc = dds_write(writer, sample->data());
    }
    if (rc == DDS_RETCODE_OK) {
      // SYNC: relaxed; a statistic.
      t.counts.exported.fetch_add(1, std::memory_order_relaxed);
    } else {
      // SYNC: relaxed; a statistic.
      if (t.counts.write_failed.fetch_add(1, std::memory_order_relaxed) % 1000 == 0)
        spdlog::warn("bridge: topic '{}': DDS did not take a sample: {}", t.topic->name,
                     dds_strretcode(rc));
    }
  }
}

}  // namespace ferry::bridge
