#pragma once
// One bridged topic, one direction: served by its own thread, or (imports
// that never wait to publish) by Cyclone's receive thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ferry/ferry.hpp>
#include <memory>
#include <optional>
#include <string>

#include "dds_entity.hpp"
#include "dds_type.hpp"
#include "ferry/config/config.hpp"

namespace ferry::bridge {

// Counters written by the link's thread and read by the stats printer:
// relaxed atomics, as the figures need no ordering with anything else.
struct LinkCounters {
  std::atomic<std::uint64_t> exported{0};
  std::atomic<std::uint64_t> imported{0};
  std::atomic<std::uint64_t> echoes{0};
  std::atomic<std::uint64_t> undecodable{0};
  std::atomic<std::uint64_t> too_large{0};
  std::atomic<std::uint64_t> not_published{0};
  std::atomic<std::uint64_t> write_failed{0};
};

// What both directions of a topic share.
struct BridgedTopic {
  const config::Topic* topic = nullptr;  // in the configuration
  const config::Schema* schema = nullptr;
  DdsType type;
  DdsEntity dds_topic;
  // An imported sample of a type with string<=N or T[<=N] is CDR made by
  // Cyclone; an exported one is written as ferry's CDR (cdr_write.hpp).
  // No loops (docs/bridge.md): the importer's publisher id, set before the
  // threads start when the topic is also exported; the exporter skips the
  // samples it finds in their SampleInfo (what this bridge imported).
  std::optional<std::uint64_t> importer_id;
  // The import's DDS reader: written by the main loop when it replaces the
  // reader (release), read by the import thread (acquire).
  std::atomic<dds_entity_t> import_reader{0};
  LinkCounters counts;
};

// Local -> DDS: the samples of `subscriber` written by `writer`, until
// `stop` (relaxed: a flag polled every 100 ms, no data guarded by it). With
// the queue empty it polls for up to `spin` (Options::export_spin), then
// sleeps.
void run_export(BridgedTopic& t, RawSubscriber& subscriber, dds_entity_t writer,
                std::chrono::microseconds spin, const std::atomic<bool>& stop);
// DDS -> local: the samples `reader` takes, decoded into loans of `publisher`,
// on a thread of its own until `stop`. `reader` may be replaced meanwhile
// (its QoS adapted, import_qos.hpp): the thread follows.
void run_import(BridgedTopic& t, RawPublisher& publisher, const std::atomic<dds_entity_t>& reader,
                const std::atomic<bool>& stop);

// DDS -> local on Cyclone's thread that received the sample: one wake-up
// less per sample. Only where publishing never waits (drop_new,
// drop_oldest): a `block` topic's full subscriber would stall that thread,
// and with it every DDS topic of the bridge (and its acknowledgements).
[[nodiscard]] bool imports_on_receive_thread(const config::Topic& topic);

// What the data_available listener of one reader publishes with; it must
// outlive the listener (cleared with dds_set_listener(reader, nullptr),
// which waits for a callback in progress).
struct ImportOnReceive {
  BridgedTopic* topic = nullptr;
  RawPublisher* publisher = nullptr;
};

struct ListenerDelete {
  void operator()(dds_listener_t* l) const noexcept { dds_delete_listener(l); }
};
using ListenerPtr = std::unique_ptr<dds_listener_t, ListenerDelete>;

// A listener whose data_available takes the reader's samples and publishes
// them through `link`; for dds_create_reader.
[[nodiscard]] ListenerPtr import_listener(ImportOnReceive& link);

}  // namespace ferry::bridge
