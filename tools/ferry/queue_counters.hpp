#pragma once
// Per-queue counters read straight from the rings in shared memory (a
// read-only mapping of each ring segment; no round trip through ferryd, no
// write to the ring), and the per-topic totals and rates built from them.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/discovery/messages.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::cli {

// One queue's counters, named as `ferry topic info` shows them.
struct QueueCounters {
  std::uint64_t published = 0;  // samples its publisher offered it: delivered + dropped + timed_out
  std::uint64_t delivered =
      0;                    // accepted into the queue (including those that overwrote an older one)
  std::uint64_t taken = 0;  // taken by the subscriber
  std::uint64_t dropped = 0;      // refused, queue full (drop_new)
  std::uint64_t overwritten = 0;  // older samples discarded for newer ones (drop_oldest)
  std::uint64_t timed_out = 0;    // still full at the block deadline (block)
  std::uint64_t backlog = 0;      // waiting in the queue now
  // The most seen waiting: by the publisher finding the queue full, by the
  // subscriber re-reading its tail, or by this read.
  std::uint64_t max_backlog = 0;
};

// A queue's ring segment, mapped read-only; empty when it is gone (its
// queue was removed since the topic list was read).
[[nodiscard]] std::optional<transport::Segment> open_ring_read_only(const std::string& ring_shm);

// Keeps read-only mappings of ring segments, by name, between reads.
class RingReader {
 public:
  // Empty when the ring is gone (its queue was just removed) or is not a
  // ring this build can read.
  std::optional<QueueCounters> read(const std::string& ring_shm);
  // Unmaps the rings not in `keep`.
  void keep_only(const std::vector<std::string>& keep);

 private:
  std::map<std::string, transport::Segment> mapped_;
};

// A topic's counters at one instant: per queue (by ring name) and summed.
struct TopicSnapshot {
  discovery::TopicInfo info;
  std::map<std::string, QueueCounters> queues;  // by ring name; unreadable queues are missing
  // Per publisher port: the samples it published, as its busiest queue
  // counted them (a publisher offers every sample to each of its queues).
  std::map<std::uint64_t, std::uint64_t> published_by;
  // Sums over the real subscribers' queues (published: the sum of
  // published_by); observers' queues (tools) are left out: what a tool
  // missed says nothing about the topic.
  QueueCounters total;
  std::chrono::steady_clock::time_point at;
};

[[nodiscard]] TopicSnapshot snapshot(const discovery::TopicInfo& info, RingReader& rings);

// Publish rates from counters polled often (every few milliseconds): for
// each publisher, the samples between the first and the last change seen in
// the window over the time between them, so that a 10 Hz topic measured for
// half a second reads 10.0, not 8 or 12. A publisher that fell silent (or
// changed fewer than twice) gets its plain average over the window.
class RateMeter {
 public:
  using Clock = std::chrono::steady_clock;

  void observe(const TopicSnapshot& s);
  // Samples per second published on the topic in this window; empty when
  // the topic has no queue (the rings are the only counters).
  [[nodiscard]] std::optional<double> rate(const std::string& topic, Clock::time_point now) const;
  // The fewest changes any observed publisher showed in this window.
  [[nodiscard]] std::size_t fewest_changes() const;
  // A new window, starting from the last observations.
  void restart();

 private:
  struct Track {
    Clock::time_point start;  // the window's first observation
    std::uint64_t start_count = 0;
    Clock::time_point first_at, last_at;  // first and last change seen
    std::uint64_t first_count = 0, last_count = 0;
    std::size_t changes = 0;
    Clock::time_point seen_at;  // the last observation
  };
  std::map<std::string, std::map<std::uint64_t, Track>>
      topics_;  // topic -> publisher port -> track
};

}  // namespace ferry::cli
