#pragma once
// What the taking thread hands the I/O thread, in the order it happened:
// channels that appeared or went away and the samples taken, so that a
// channel is always advertised before its first message and a message of a
// channel gone is never sent.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "channel_layout.hpp"
#include "ferry/config/config.hpp"
#include "payload.hpp"
#include "protocol.hpp"

namespace ferry::foxglove {

// How one topic's samples are written and read as CDR: its layout, and the
// configuration whose schema describes it (kept alive by every user).
struct TopicCoding {
  std::shared_ptr<const config::Config> config;
  cli::ChannelLayout layout;
};

struct ChannelAdded {
  ChannelDescription description;
  std::shared_ptr<const TopicCoding> coding;
};
struct ChannelRemoved {
  ChannelId id = 0;
};
// The taking thread could not subscribe to a channel clients asked for.
struct SubscribeFailed {
  ChannelId id = 0;
  std::string why;
};
using PumpEvent = std::variant<OutMessage, ChannelAdded, ChannelRemoved, SubscribeFailed>;

// The bounded hand-off from the taking thread to the I/O thread. The taker
// appends batches; the first batch after a take() calls `wake` (which posts
// the drain onto the io_context), so a busy stream costs one post per
// batch. Past `byte_limit` queued payload bytes the taker waits
// (wait_for_room) and leaves samples in ferry's queues, whose overflow
// the publisher never notices: the I/O thread fell behind, not a client.
class EventHandoff {
 public:
  explicit EventHandoff(std::size_t byte_limit) : byte_limit_(byte_limit) {}
  // Before the taker starts: how to wake the I/O thread (any thread).
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

  // Taker: appends `events` (moved from, left empty) carrying `bytes`.
  void push(std::vector<PumpEvent>& events, std::size_t bytes);
  // Taker: whether the queued bytes reached the limit.
  [[nodiscard]] bool full() const;
  // Taker: sleeps until there is room, close(), or `timeout`.
  void wait_for_room(std::chrono::milliseconds timeout);
  // I/O thread: everything queued, oldest first.
  [[nodiscard]] std::vector<PumpEvent> take();
  // Ends wait_for_room() for good.
  void close();

 private:
  const std::size_t byte_limit_;
  std::function<void()> wake_;
  mutable std::mutex mutex_;
  std::condition_variable room_;
  std::vector<PumpEvent> events_;  // guarded by mutex_
  std::size_t bytes_ = 0;          // guarded by mutex_
  bool wake_pending_ = false;      // guarded by mutex_: a drain is posted and not run yet
  bool closed_ = false;            // guarded by mutex_
};

}  // namespace ferry::foxglove
