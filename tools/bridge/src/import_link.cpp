// DDS -> local. The received CDR (Cyclone's reassembled message) is decoded
// straight into a pool loan and published without a further copy. A sample
// that is not the topic's CDR form is counted and dropped, never published;
// so is one with a string or sequence over the ferry type's bound
// (too_large: never truncated, never read past).
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsrt/iovec.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstring>
#include <string_view>

#include "ferry/config/cdr.hpp"
#include "topic_link.hpp"

namespace ferry::bridge {

namespace {

constexpr std::uint32_t kBatch = 16;
constexpr dds_duration_t kImportStopCheck =
    DDS_MSECS(100);  // how often a block import looks at `stop`

// The CDR bytes of a received sample, borrowed while this lives.
class SerializedView {
 public:
  explicit SerializedView(ddsi_serdata* sd) : sd_(sd) {
    ref_sd_ = ddsi_serdata_to_ser_ref(sd_, 0, ddsi_serdata_size(sd_), &iov_);
  }
  ~SerializedView() {
    ddsi_serdata_to_ser_unref(ref_sd_, &iov_);
    ddsi_serdata_unref(sd_);
  }
  SerializedView(const SerializedView&) = delete;
  SerializedView& operator=(const SerializedView&) = delete;
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return {static_cast<const std::byte*>(iov_.iov_base), static_cast<std::size_t>(iov_.iov_len)};
  }

 private:
  ddsi_serdata* sd_;
  ddsi_serdata* ref_sd_ = nullptr;
  ddsrt_iovec_t iov_{};
};

void dropped_undecodable(BridgedTopic& t, const std::string& why) {
  // SYNC: relaxed; a statistic (see LinkCounters).
  const auto n = t.counts.undecodable.fetch_add(1, std::memory_order_relaxed);
  if (n < 10 || n % 1000 == 0)
    spdlog::warn("bridge: topic '{}': dropped a DDS sample that does not decode ({} so far): {}",
                 t.topic->name, n + 1, why);
}

void dropped_too_large(BridgedTopic& t, const std::string& why) {
  // SYNC: relaxed; a statistic.
  const auto n = t.counts.too_large.fetch_add(1, std::memory_order_relaxed);
  if (n < 10 || n % 1000 == 0)
    spdlog::warn(
        "bridge: topic '{}': dropped a DDS sample too large for the ferry type ({} so far): {}",
        t.topic->name, n + 1, why);
}

void not_published(BridgedTopic& t, std::string_view why) {
  // SYNC: relaxed; a statistic.
  const auto n = t.counts.not_published.fetch_add(1, std::memory_order_relaxed);
  if (n < 10 || n % 1000 == 0)
    spdlog::warn("bridge: topic '{}': a DDS sample was not published locally ({} so far): {}",
                 t.topic->name, n + 1, why);
}

// Decodes one received sample into a loan and publishes it.
void publish_one(BridgedTopic& t, RawPublisher& publisher, std::span<const std::byte> cdr) {
  std::span<const std::byte> data;  // bytes topics: the payload inside `cdr`
  std::size_t size = publisher.sample_size();
  try {
    if (t.topic->is_bytes()) {
      data = config::cdr_decode_bytes(cdr);
      size = data.size();
      if (size > publisher.max_size()) {
        dropped_too_large(
            t, fmt::format("{} bytes, over the topic's max_size {}", size, publisher.max_size()));
        return;
      }
    }
  } catch (const config::CdrError& e) {
    dropped_undecodable(t, e.what());
    return;
  }
  auto loan = publisher.loan(size);
  if (!loan) {
    not_published(t, to_string(loan.error()));
    return;
  }
  const std::span<std::byte> out(loan->data(), size);
  if (t.topic->is_bytes()) {
    if (size != 0) std::memcpy(out.data(), data.data(), size);
  } else {
    try {
      config::cdr_decode(*t.schema, *t.topic->type_index, cdr, out);
    } catch (const config::CdrTooLong& e) {
      dropped_too_large(t, e.what());
      return;  // the loan goes back to the pool
    } catch (const config::CdrError& e) {
      dropped_undecodable(t, e.what());
      return;  // the loan goes back to the pool
    }
  }
  const PublishResult result = publisher.publish(std::move(*loan), size);
  if (result.error) {
    not_published(t, to_string(*result.error));
    return;
  }
  // Subscribers there were, and every queue was full: none has the sample.
  if (result.delivered == 0 && result.timed_out > 0) {
    not_published(t, fmt::format("the queues of all {} local subscriber(s) stayed full for the "
                                 "topic's block_timeout_ms",
                                 result.timed_out));
    return;
  }
  if (result.delivered == 0 && result.dropped > 0) {
    not_published(t, fmt::format("the queues of all {} local subscriber(s) refused it (full or "
                                 "leaving)",
                                 result.dropped));
    return;
  }
  // SYNC: relaxed; a statistic.
  t.counts.imported.fetch_add(1, std::memory_order_relaxed);
}

// Takes everything `reader` holds and publishes it; returns once it is
// empty, or at `stop` (checked per sample: a `block` topic's full
// subscriber may hold each publish up to block_timeout_ms).
void take_and_publish(BridgedTopic& t, RawPublisher& publisher, dds_entity_t reader,
                      const std::atomic<bool>* stop = nullptr) {
  std::array<ddsi_serdata*, kBatch> samples{};
  std::array<dds_sample_info_t, kBatch> infos{};
  // SYNC: relaxed; pairs with the relaxed store in run(): a stop flag only.
  while (stop == nullptr || !stop->load(std::memory_order_relaxed)) {
    const dds_return_t n = dds_takecdr(reader, samples.data(), kBatch, infos.data(), DDS_ANY_STATE);
    if (n <= 0) return;
    for (dds_return_t i = 0; i < n; ++i) {
      const SerializedView view(samples[static_cast<std::size_t>(i)]);
      if (!infos[static_cast<std::size_t>(i)].valid_data) continue;  // a dispose or unregister
      // SYNC: relaxed; a stop flag only. Stopping: the rest is let go.
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) continue;
      publish_one(t, publisher, view.bytes());
    }
  }
}

// Cyclone's data_available callback, on the thread that stored the sample
// in the reader (its receive thread): Cyclone runs one callback of a reader
// at a time, under its own mutex, so successive calls see each other's
// writes to the publisher. Nothing may escape into Cyclone's C code.
void on_data_available(dds_entity_t reader, void* arg) {
  auto& link = *static_cast<ImportOnReceive*>(arg);
  try {
    take_and_publish(*link.topic, *link.publisher, reader);
  } catch (const std::exception& e) {
    spdlog::error("bridge: topic '{}': import failed: {}", link.topic->topic->name, e.what());
  }
}

}  // namespace

bool imports_on_receive_thread(const config::Topic& topic) {
  return topic.settings.policy != config::Policy::Block;
}

ListenerPtr import_listener(ImportOnReceive& link) {
  ListenerPtr listener(dds_create_listener(&link));
  dds_lset_data_available(listener.get(), on_data_available);
  return listener;
}

void run_import(BridgedTopic& t, RawPublisher& publisher, const std::atomic<dds_entity_t>& reader,
                const std::atomic<bool>& stop) {
  // SYNC: acquire; pairs with the release store of a new reader in run().
  dds_entity_t current = reader.load(std::memory_order_acquire);
  DdsEntity waitset(dds_create_waitset(dds_get_participant(current)),
                    "waitset of " + t.topic->name);
  DdsEntity condition;
  bool attached = false;
  // SYNC: relaxed; pairs with the relaxed store in run(): a stop flag only.
  while (!stop.load(std::memory_order_relaxed)) {
    // SYNC: acquire; as above. The reader was replaced (its QoS adapted):
    // the old one is gone, and its read condition with it.
    if (const dds_entity_t now = reader.load(std::memory_order_acquire);
        now != current || !attached) {
      current = now;
      condition = DdsEntity();
      const dds_entity_t c = dds_create_readcondition(current, DDS_ANY_STATE);
      attached = c > 0 && dds_waitset_attach(waitset.get(), c, 0) == DDS_RETCODE_OK;
      if (c > 0) condition = DdsEntity(c, "read condition of " + t.topic->name);
    }
    (void)dds_waitset_wait(waitset.get(), nullptr, 0, kImportStopCheck);
    take_and_publish(t, publisher, current, &stop);
  }
}

}  // namespace ferry::bridge
