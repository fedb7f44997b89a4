#pragma once
// clientPublish: the thread that publishes what clients send into ferry
// topics. Its own thread because a `block` topic's publish may wait up to
// block_timeout_ms for a full subscriber: neither the sockets nor the
// stream to the clients wait with it. Jobs come from the I/O thread in
// order through a bounded queue; a client whose messages do not fit is told
// (the job is refused, not queued).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <ferry/ferry.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "events.hpp"

namespace ferry::foxglove {

class ClientPublisher {
 public:
  // Called on the publishing thread with a sentence for the client.
  using Report = std::function<void(std::string)>;

  // The payload bytes that may wait to be published, all clients together.
  static constexpr std::size_t kQueueBytes = std::size_t{64} << 20;

  explicit ClientPublisher(Node& node) : node_(node) {}

  // A client channel on `topic` opens: the first one creates the publisher
  // (a refusal such as max_publishers goes to `report`).
  void open(const std::string& topic, std::shared_ptr<const TopicCoding> coding, Report report);
  // The last close of a topic destroys its publisher.
  void close(const std::string& topic);
  // Queues one CDR message for `topic` (opened). False when the queue is
  // full: nothing is queued.
  [[nodiscard]] bool publish(const std::string& topic, std::vector<std::byte> cdr, Report report);

  // The thread's body, until stop(); any thread may call stop().
  void run();
  void stop();

 private:
  struct Job {
    enum class Kind : std::uint8_t { Open, Close, Publish };
    Kind kind = Kind::Publish;
    std::string topic;
    std::shared_ptr<const TopicCoding> coding;  // Open
    std::vector<std::byte> cdr;                 // Publish
    Report report;
  };
  struct Port {
    std::shared_ptr<const TopicCoding> coding;
    std::optional<RawPublisher> raw;
    std::optional<Publisher<Bytes>> bytes;
    std::vector<std::byte> sample;  // the decoded sample
    std::size_t opened = 0;
  };
  void enqueue(Job job);
  void perform(Job& job);
  void publish_now(Port& port, const Job& job);

  Node& node_;
  std::map<std::string, Port> ports_;  // the publishing thread's
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<Job> jobs_;       // guarded by mutex_
  std::size_t job_bytes_ = 0;  // guarded by mutex_
  bool stopped_ = false;       // guarded by mutex_
};

}  // namespace ferry::foxglove
