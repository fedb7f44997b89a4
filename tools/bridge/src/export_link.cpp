// Local -> DDS. Cyclone serializes straight from the sample in the shared
// pool (the descriptor's ops read the ferry layout), so a sample is copied
// once, into the DDS message. A sample with bounded strings or sequences is
// encoded by ferry's codec first and copied once more by Cyclone
// (cdr_write.hpp).
//
// Writes are batched (the bridge's Cyclone runs with WriteBatch, see
// cyclone_config()): a sample written while more are waiting locally goes
// into the packet being filled, and the packet is flushed as soon as the
// local queue is empty, before the thread sleeps. A lone sample leaves at
// once; a burst leaves in full packets (fewer sends here, fewer wake-ups
// on the receiving side).
//
// Once the queue is empty the thread sleeps on it at once, unless the user
// gave it spare CPU (`ferry bridge --export-spin-us N`): then it polls the
// queue for up to N us first, yielding the CPU between polls (see
// poll_yielding()).
#include <sched.h>
#include <spdlog/spdlog.h>

#include "cdr_write.hpp"
#include "ferry/config/cdr.hpp"
#include "topic_link.hpp"

namespace ferry::bridge {

namespace {

constexpr auto kExportStopCheck =
    std::chrono::milliseconds(100);  // how often an idle exporter looks at `stop`

dds_return_t write_one(const RawSample& sample, dds_entity_t writer, bool bytes, CdrWriter* cdr) {
  if (cdr != nullptr) return cdr->write(writer, {sample.data(), sample.size()});
  if (!bytes) return dds_write(writer, sample.data());
  // Cyclone only reads the buffer it is lent here.
  dds_sequence_t seq{};
  seq._maximum = seq._length = static_cast<std::uint32_t>(sample.size());
  seq._buffer = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(sample.data()));
  seq._release = false;
  return dds_write(writer, &seq);
}

// The next sample if one comes within `spin`, polling without sleeping: the
// sample is taken with no futex wake-up, and this CPU never goes idle (on
// the test VM, waking an idle vCPU costs 5-7 us). sched_yield() between
// polls hands the CPU at once to any thread woken onto it (the DDS receive
// thread, a local subscriber): a plain spin (cpu_relax) kept them waiting,
// 64 B p50 45-80 us against 31-38 us asleep, where yielding measured 11-25
// us (docs/bridge.md, "What it costs"). Opt-in only: it costs up to `spin` of CPU
// time after every sample.
std::optional<RawSample> poll_yielding(RawSubscriber& subscriber, std::chrono::microseconds spin) {
  if (spin.count() <= 0) return std::nullopt;
  const auto until = std::chrono::steady_clock::now() + spin;
  do {
    if (auto sample = subscriber.take()) return sample;
    (void)sched_yield();
  } while (std::chrono::steady_clock::now() < until);
  return std::nullopt;
}

}  // namespace

void run_export(BridgedTopic& t, RawSubscriber& subscriber, dds_entity_t writer,
                std::chrono::microseconds spin, const std::atomic<bool>& stop) {
  const bool bytes = t.topic->is_bytes();
  // A type with bounded strings or sequences: written as ferry's CDR.
  std::optional<CdrWriter> cdr;
  if (t.type.variable()) cdr.emplace(*t.schema, *t.topic->type_index, t.type.name().c_str());
  bool unflushed = false;  // written since the last flush
  bool poll = false;       // a sample came since the last poll: poll before sleeping
  // SYNC: relaxed; pairs with the relaxed store in run(): a stop flag only.
  while (!stop.load(std::memory_order_relaxed)) {
    auto sample = subscriber.take();
    if (!sample) {
      if (unflushed) {
        dds_write_flush(writer);
        unflushed = false;
      }
      // Once per sample: an idle exporter (woken every kExportStopCheck to check
      // `stop`) sleeps without polling first.
      if (poll) sample = poll_yielding(subscriber, spin);
      poll = false;
      if (!sample) sample = subscriber.take(kExportStopCheck);
      if (!sample) continue;
    }
    poll = true;
    if (t.importer_id && sample->info().publisher_id == *t.importer_id) {
      // SYNC: relaxed; a statistic (see LinkCounters).
      t.counts.echoes.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    dds_return_t rc = DDS_RETCODE_ERROR;
    try {
      rc = write_one(*sample, writer, bytes, cdr ? &*cdr : nullptr);
    } catch (const config::CdrError& e) {
      // SYNC: relaxed; a statistic.
      if (t.counts.write_failed.fetch_add(1, std::memory_order_relaxed) % 1000 == 0)
        spdlog::warn("bridge: topic '{}': a local sample does not encode: {}", t.topic->name,
                     e.what());
      continue;
    }
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
