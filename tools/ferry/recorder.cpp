#include "recorder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <span>

#include "cli_context.hpp"

namespace ferry::cli {

namespace {
// From this size on a sample that is its own CDR form is written from
// where it lies (a chunk of its own); smaller ones are cheaper to copy into
// the open chunk than to give their own chunk and write().
constexpr std::size_t kWriteInPlaceFrom = 64 * 1024;
}  // namespace

void Recorder::add(const discovery::TopicInfo& topic) {
  if (topics_.size() >= kMaxTopics)
    throw Failure(kExitUsage, fmt::format("cannot record topic '{}': ferry record takes at most "
                                          "{} topics",
                                          topic.name, kMaxTopics));
  ChannelLayout layout = channel_layout(config_, topic);
  auto found = std::find_if(schemas_.begin(), schemas_.end(),
                            [&](const auto& s) { return s.first == layout.schema_name; });
  if (found == schemas_.end()) {
    const auto id = writer_.add_schema(layout.schema_name, "ros2msg",
                                       std::as_bytes(std::span(layout.definition)));
    found = schemas_.emplace(schemas_.end(), layout.schema_name, id);
  }
  bag::StringMap metadata = {{"ferry_type", topic.type_name},
                             {"policy", std::string(discovery::to_string(topic.policy))},
                             {"capacity", std::to_string(topic.capacity)}};
  auto subscriber = node_.raw_subscriber(topic.name, SubscriberOptions{.observer = observe_});
  const auto channel = writer_.add_channel(found->second, topic.name, "cdr", std::move(metadata));
  auto recorded = std::make_unique<RecordedTopic>(
      RecordedTopic{topic.name, std::move(layout), channel, std::move(subscriber), {}, {}, 0, 0});
  wait_set_.attach(recorded->subscriber);
  topics_.push_back(std::move(recorded));
}

bool Recorder::has(const std::string& topic) const {
  return std::any_of(topics_.begin(), topics_.end(),
                     [&](const auto& t) { return t->name == topic; });
}

bool Recorder::record_one(RecordedTopic& topic) {
  auto sample = topic.subscriber.take();
  if (!sample) return false;
  const SampleMeta meta = topic.meta(*sample);
  topic.gaps.taken(meta.publisher_id, meta.sequence);
  const std::uint64_t size = cdr_size(topic.layout, sample->size());
  // MCAP's sequence is 32 bits: the low half of ferry's.
  const bag::MessageHeader header{topic.channel, static_cast<std::uint32_t>(meta.sequence),
                                  realtime_ns(), meta.publish_time_ns};
  const std::span<const std::byte> bytes = sample->bytes();
  std::array<std::byte, kMaxCdrImagePrefix> prefix{};
  const std::size_t prefix_size = bytes.size() >= kWriteInPlaceFrom && size > bytes.size()
                                      ? cdr_image_prefix(topic.layout, bytes.size(), prefix)
                                      : 0;
  if (prefix_size != 0 && prefix_size + bytes.size() == size) {
    // A large sample that is its own CDR form: from the pool to the file in
    // the one copy write() makes.
    writer_.write_message(header, std::span<const std::byte>(prefix).first(prefix_size), bytes);
  } else {
    encode(config_.schema, topic.layout, bytes, writer_.reserve_message(header, size));
  }
  ++topic.messages;
  topic.bytes += size;
  return true;
}

std::uint64_t Recorder::drain(std::uint64_t limit) {
  // A few samples per topic per round, so that a busy topic cannot starve
  // the others of their turn before their queues overflow.
  constexpr int kPerRound = 16;
  std::uint64_t written = 0;
  bool any = true;
  while (any && written < limit) {
    any = false;
    for (auto& topic : topics_) {
      for (int i = 0; i < kPerRound && written < limit; ++i) {
        if (!record_one(*topic)) break;
        ++written;
        any = true;
      }
    }
  }
  return written;
}

void Recorder::write_metadata() {
  bag::StringMap metadata;
  std::uint64_t missed = 0;
  for (const auto& t : topics_) {
    metadata.emplace_back("messages:" + t->name, std::to_string(t->messages));
    metadata.emplace_back("missed:" + t->name, std::to_string(t->gaps.missed()));
    if (t->gaps.missed() != 0)
      metadata.emplace_back("missed_ranges:" + t->name, t->gaps.describe());
    missed += t->gaps.missed();
  }
  metadata.emplace_back("missed", std::to_string(missed));
  writer_.add_metadata("ferry.record", std::move(metadata));
}

}  // namespace ferry::cli
