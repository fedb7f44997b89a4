#pragma once
// ferry record's engine: a raw subscriber per topic, each sample written as
// CDR into the MCAP writer's chunk buffer (DESIGN 1.10), missed sequences
// counted per topic.

#include <chrono>
#include <cstdint>
#include <ferry/ferry.hpp>
#include <memory>
#include <string>
#include <vector>

#include "channel_layout.hpp"
#include "ferry/bag/mcap_writer.hpp"
#include "gap_counter.hpp"
#include "sample_meta.hpp"

namespace ferry::cli {

struct RecordedTopic {
  std::string name;
  ChannelLayout layout;
  std::uint16_t channel = 0;
  RawSubscriber subscriber;
  SampleMetaReader meta;
  GapCounter gaps;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;  // CDR bytes written
};

class Recorder {
 public:
  // WaitSet's limit: one sleep covers every topic.
  static constexpr std::size_t kMaxTopics = WaitSet::kMaxAttachments;

  // `observe`: subscribe as an observer (never slows a publisher; what it
  // missed shows as sequence gaps) instead of as a lossless subscriber.
  Recorder(Node& node, const config::Config& config, bag::McapWriter& writer, bool observe = false)
      : node_(node), config_(config), writer_(writer), observe_(observe) {}

  // Subscribes and adds the topic's schema (once per type) and channel.
  // Throws Failure past kMaxTopics, ferry::Error when the port is refused.
  void add(const discovery::TopicInfo& topic);
  [[nodiscard]] bool has(const std::string& topic) const;

  // Takes what is queued on every topic, round-robin, until all are empty
  // or `limit` samples were written; returns how many were.
  std::uint64_t drain(std::uint64_t limit);
  // Sleeps until a topic has a sample or `timeout` passes.
  void wait(std::chrono::nanoseconds timeout) { (void)wait_set_.wait(timeout); }

  // The "ferry.record" Metadata record: per topic the messages recorded and
  // the samples missed (with their first ranges).
  void write_metadata();

  [[nodiscard]] const std::vector<std::unique_ptr<RecordedTopic>>& topics() const noexcept {
    return topics_;
  }

 private:
  bool record_one(RecordedTopic& topic);

  Node& node_;
  const config::Config& config_;
  bag::McapWriter& writer_;
  bool observe_ = false;
  WaitSet wait_set_;
  std::vector<std::unique_ptr<RecordedTopic>> topics_;
  std::vector<std::pair<std::string, std::uint16_t>> schemas_;  // schema name -> id
};

}  // namespace ferry::cli
