#pragma once
// One client's samples waiting to be sent: a FIFO per channel under one
// byte budget (--send-buffer), served round-robin.
//
// Fairness, both ways a busy channel could starve the others:
// - Sending: one message of each channel in turn, so a 100 Hz pose channel
//   gets its turn between two 1080p frames instead of waiting behind a
//   backlog of them.
// - Dropping: past the budget, the OLDEST message of the channel holding
//   the most bytes goes first, again until the total fits; a channel that
//   holds little (poses) loses nothing while a big one (frames) is over its
//   share. The message just added is never the one dropped, so a message
//   larger than the whole budget still goes out when the client catches up.
//
// Each message counts its payload plus kEntryOverhead (its share of the
// queue's own memory), so the budget bounds memory, also for tiny messages.
// Single-threaded (the server's I/O thread).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "payload.hpp"

namespace ferry::foxglove {

class SendQueue {
 public:
  static constexpr std::size_t kEntryOverhead = 64;

  explicit SendQueue(std::size_t budget) : budget_(budget) {}

  // Appends `m` to its channel, then drops oldest messages (see above) until
  // the total is within the budget. Returns how many were dropped.
  std::size_t push(OutMessage m);
  // The next message, channels in turn (ascending id, wrapping around).
  [[nodiscard]] std::optional<OutMessage> pop();
  // Forgets a channel's queued messages (unsubscribed): not counted as drops.
  void remove_channel(ChannelId channel);

  [[nodiscard]] bool empty() const noexcept { return messages_ == 0; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t messages() const noexcept { return messages_; }
  [[nodiscard]] std::size_t budget() const noexcept { return budget_; }

  // Drops per channel since the last call, then cleared.
  [[nodiscard]] std::map<ChannelId, std::uint64_t> take_recent_drops();
  // Drops per channel since the queue was made.
  [[nodiscard]] const std::map<ChannelId, std::uint64_t>& total_drops() const noexcept {
    return total_drops_;
  }

 private:
  struct Channel {
    std::deque<OutMessage> queue;
    std::size_t bytes = 0;
  };
  static std::size_t cost(const OutMessage& m) noexcept {
    return (m.payload ? m.payload->size() : 0) + kEntryOverhead;
  }
  void drop_oldest(ChannelId id, Channel& c);

  std::size_t budget_;
  std::map<ChannelId, Channel> channels_;  // a channel with an empty queue is erased
  std::size_t bytes_ = 0;
  std::size_t messages_ = 0;
  std::optional<ChannelId> last_served_;
  std::map<ChannelId, std::uint64_t> recent_drops_;
  std::map<ChannelId, std::uint64_t> total_drops_;
};

}  // namespace ferry::foxglove
