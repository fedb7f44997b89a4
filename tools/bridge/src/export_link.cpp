// Local -> DDS. Cyclone serializes straight from the sample in the shared
// pool (the descriptor's ops read the ferry layout), so a sample is copied
// once, into the DDS message.
//
// Writes are batched (the bridge's Cyclone runs with WriteBatch, see
// cyclone_config()): a sample written while more are waiting locally goes
// into the packet being filled, and the packet is flushed as soon as the
// local queue is empty, before the thread sleeps. A lone sample leaves at
// once; a burst leaves in full packets (fewer sends here, fewer wake-ups
// on the receiving side).
#include <spdlog/spdlog.h>

#include "topic_link.hpp"

namespace ferry::bridge {

namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);

dds_return_t write_one(const RawSample& sample, dds_entity_t writer, bool bytes) {
  if (!bytes) return dds_write(writer, sample.data());
  // Cyclone only reads the buffer it is lent here.
  dds_sequence_t seq{};
  seq._maximum = seq._length = static_cast<std::uint32_t>(sample.size());
  seq._buffer = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(sample.data()));
  seq._release = false;
  return dds_write(writer, &seq);
}

}  // namespace

void run_export(BridgedTopic& t, RawSubscriber& subscriber, dds_entity_t writer,
                const std::atomic<bool>& stop) {
  const bool bytes = t.topic->is_bytes();
  bool unflushed = false;  // written since the last flush
  // SYNC: relaxed; pairs with the relaxed store in run(): a stop flag only.
  while (!stop.load(std::memory_order_relaxed)) {
    auto sample = subscriber.take();
    if (!sample) {
      if (unflushed) {
        dds_write_flush(writer);
        unflushed = false;
      }
      sample = subscriber.take(kPoll);
      if (!sample) continue;
    }
    if (t.importer_id && sample->info().publisher_id == *t.importer_id) {
      // SYNC: relaxed; a statistic (see LinkCounters).
      t.counts.echoes.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const dds_return_t rc = write_one(*sample, writer, bytes);
    if (rc == DDS_RETCODE_OK) {
      unflushed = true;
      // SYNC: relaxed; a statistic.
      t.counts.exported.fetch_add(1, std::memory_order_relaxed);
    } else {
      // SYNC: relaxed; a statistic.
      if (t.counts.write_failed.fetch_add(1, std::memory_order_relaxed) % 1000 == 0)
        spdlog::warn("bridge: topic '{}': DDS did not take a sample: {}", t.topic->name,
                     dds_strretcode(rc));
    }
  }
  if (unflushed) dds_write_flush(writer);
}

}  // namespace ferry::bridge
