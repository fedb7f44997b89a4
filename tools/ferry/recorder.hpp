#pragma once
// ferry record's engine: a raw subscriber per topic, each sample written as
// CDR into the MCAP writer's chunk buffer (docs/record-replay.md), missed sequences
// counted per topic.
//
// Two threads, so that a stalled write() (page-cache writeback, a slow disk,
// the writer descheduled) does not leave the queues undrained: the caller's
// thread takes samples as they come and hands them to a writer thread
// through a bounded FIFO, which the writer works through in the order they
// were taken. Samples under 64 KiB are copied aside and released at once;
// larger ones (frames) stay in their pool chunks (no copy), held, and the
// writer releases each right after its own write. A topic's subscriber
// holds at most its max_held samples, so a stall is absorbed by max_held
// plus the topic's queue; past that the queue overflows as before and the
// gap is reported.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <ferry/ferry.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "channel_layout.hpp"
#include "copy_arena.hpp"
#include "ferry/bag/mcap_writer.hpp"
#include "gap_counter.hpp"
#include "handoff_queue.hpp"
#include "sample_meta.hpp"

namespace ferry::cli {

struct RecordedTopic {
  // Set by add(), read-only afterwards.
  std::string name;
  ChannelLayout layout;
  bag::StringMap channel_metadata;
  std::uint32_t max_held = 1;  // the subscriber's: samples held and not yet written
  // The taking thread's.
  RawSubscriber subscriber;
  SampleMetaReader meta{};
  GapCounter gaps{};
  // The writer thread's (read by others after finish()).
  std::uint16_t channel = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;  // CDR bytes written
  // Samples not written: a string or sequence length over its bound (only a
  // faulty or hostile publisher writes one).
  std::uint64_t bad_samples = 0;
  // Samples taken, held (not copied) and not yet released by the writer.
  std::atomic<std::uint32_t> in_flight{0};
};

// One entry of the hand-off: a taken sample to write, or an order for the
// writer, kept in the order the taking thread made them.
struct RecordJob {
  enum class Kind : std::uint8_t { Sample, AddChannel, Flush };
  Kind kind = Kind::Sample;
  RecordedTopic* topic = nullptr;
  // A held sample (a large one, written from its pool chunk), or empty: the
  // sample was copied into the recorder's CopyArena and released at once.
  std::optional<RawSample> sample{};
  const std::byte* copy = nullptr;
  std::uint32_t copy_size = 0;
  std::uint64_t copy_end = 0;  // CopyArena::give_back() once written
  SampleMeta meta{};
  std::uint64_t log_time = 0;  // when taken

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return sample ? sample->bytes() : std::span<const std::byte>(copy, copy_size);
  }
};

class Recorder {
 public:
  // WaitSet's limit: one sleep covers every topic.
  static constexpr std::size_t kMaxTopics = WaitSet::kMaxAttachments;

  // `observe`: subscribe as an observer (never slows a publisher; what it
  // missed shows as sequence gaps) instead of as a lossless subscriber.
  // Starts the writer thread.
  Recorder(Node& node, const config::Config& config, bag::McapWriter& writer, bool observe = false);
  // Writes what was taken (as finish()) if finish() was not called.
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Subscribes; the writer adds the topic's schema (once per type) and
  // channel before its first sample. Waits while the writer's queue is
  // full (copied samples fill it while the writer is behind). Throws Failure
  // past kMaxTopics, ferry::Error when the port is refused, and rethrows the
  // writer's error as take() does.
  void add(const discovery::TopicInfo& topic);
  [[nodiscard]] bool has(const std::string& topic) const;

  // Takes what is queued on every topic, round-robin, until all are empty,
  // `limit` samples were taken, or the writer holds max_held of a topic;
  // hands them to the writer and returns how many. Rethrows the writer's
  // error (bag::BagError, config::CdrError).
  std::uint64_t take(std::uint64_t limit);
  // Sleeps until a topic has a sample or `timeout` passes; while the writer
  // holds max_held samples of a topic, until it writes one (at most 1 ms:
  // the other topics are polled meanwhile).
  void wait(std::chrono::nanoseconds timeout);
  // Has the writer write its open chunk after what was taken so far (a
  // recorder does so every second, so a kill -9 loses little). Does nothing
  // while the previous request waits.
  void flush();
  // Waits until everything taken is written, stops the writer and rethrows
  // its error. take() must not be called afterwards.
  void finish();

  // The "ferry.record" Metadata record: per topic the messages recorded and
  // the samples missed (with their first ranges). After finish().
  void write_metadata();

  [[nodiscard]] const std::vector<std::unique_ptr<RecordedTopic>>& topics() const noexcept {
    return topics_;
  }

 private:
  // Taking thread.
  bool take_one(RecordedTopic& topic, RecordJob& job);  // fills `job`
  void rethrow_if_failed();
  // Writer thread.
  void write_loop();
  void add_channel(RecordedTopic& topic);
  void write_sample(RecordJob& job);

  Node& node_;
  const config::Config& config_;
  bag::McapWriter& writer_;
  bool observe_ = false;
  WaitSet wait_set_;
  std::vector<std::unique_ptr<RecordedTopic>> topics_;
  bool blocked_ = false;  // the last take() stopped at a max_held or a full queue
  std::vector<std::pair<std::string, std::uint16_t>> schemas_;  // writer: schema name -> id
  HandoffQueue<RecordJob> queue_;
  CopyArena arena_;  // the copied samples' bytes, in queue order
  std::atomic<bool> flush_queued_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // set by the writer before failed_
  std::thread writer_thread_;
};

}  // namespace ferry::cli
