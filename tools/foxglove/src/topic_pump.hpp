#pragma once
// The taking thread and its helper. The helper (run_poller) asks ferryd for
// the domain's topics every poll_topics and offers the list; the taking
// thread (run) turns it into channels that appeared or went away,
// subscribes as an observer to the channels some client subscribed to, and
// encodes each sample it takes once, straight from its pool chunk into the
// payload every client shares (one copy), releasing the chunk at once. It
// sleeps on the WaitSet between samples (no CPU while nothing is published)
// and never waits for ferryd's answers: a slow reply delays a new channel,
// not a sample.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <ferry/ferry.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "events.hpp"
#include "ferry/foxglove/server.hpp"

namespace ferry::foxglove {

class TopicPump {
 public:
  // WaitSet's limit: channels streamed at once.
  static constexpr std::size_t kMaxStreamed = WaitSet::kMaxAttachments;

  TopicPump(Node& node, const Options& options, const DomainQueries& queries, EventHandoff& out);
  TopicPump(const TopicPump&) = delete;
  TopicPump& operator=(const TopicPump&) = delete;

  // Asks ferryd for the topics and offers them to the taking thread. Called
  // (with apply_offered) once before the threads start, so that the first
  // clients see every topic.
  void poll();
  // The taking thread's: turns the last list offered into channels.
  void apply_offered();
  // The helper thread's body: poll() every poll_topics, until stop().
  void run_poller();
  // The taking thread's body, until stop().
  void run();
  // Any thread.
  void stop();
  // I/O thread: the channels some client subscribes to now.
  void want(std::set<ChannelId> channels);

 private:
  struct Known {
    ChannelId id = 0;
    std::shared_ptr<const TopicCoding> coding;
    std::string type_name;  // as ferryd lists it, to see a change of type
    std::uint64_t sample_size = 0;
    std::optional<RawSubscriber> subscriber;
    bool failed = false;  // subscribing failed: not retried while still wanted
    bool bad_sample_logged = false;
  };

  struct Offered {
    std::vector<discovery::TopicInfo> topics;
    std::shared_ptr<const config::Config> config;
  };

  [[nodiscard]] bool shown(const discovery::TopicInfo& topic, const config::Config& config) const;
  void refresh_config(const std::vector<discovery::TopicInfo>& topics);
  ChannelId channel_id_for(const std::string& topic, const TopicCoding& coding);
  void reconcile();
  void unsubscribe(Known& k);
  // Takes up to a few samples per streamed channel; false when none came.
  bool take_round();
  void flush();

  Node& node_;
  const Options& options_;
  const DomainQueries& queries_;
  EventHandoff& out_;
  // The poller's.
  std::shared_ptr<const config::Config> config_;
  std::set<std::string> config_refetched_for_;  // type names the config lacked
  bool poll_failed_ = false;                    // logged once until a poll succeeds

  // The taking thread's.

  std::map<std::string, Known> topics_;  // by topic name
  // Channels gone, kept so that one coming back unchanged keeps its id.
  std::map<std::string, ChannelDescription> retired_;
  ChannelId next_id_ = 1;
  WaitSet wait_set_;
  std::size_t streamed_ = 0;

  std::vector<PumpEvent> batch_;  // not handed over yet
  std::size_t batch_bytes_ = 0;

  std::mutex mutex_;
  std::set<ChannelId> wanted_;      // guarded by mutex_
  bool wanted_changed_ = false;     // guarded by mutex_
  std::optional<Offered> offered_;  // guarded by mutex_: the last list, not applied yet
  bool stopping_ = false;           // guarded by mutex_
  std::condition_variable stop_cv_;
  std::atomic<bool> stop_{false};
};

}  // namespace ferry::foxglove
