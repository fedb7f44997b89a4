#include "send_queue.hpp"

#include <iterator>
#include <utility>

namespace ferry::foxglove {

void SendQueue::drop_oldest(ChannelId id, Channel& c) {
  const std::size_t n = cost(c.queue.front());
  c.queue.pop_front();
  c.bytes -= n;
  bytes_ -= n;
  --messages_;
  ++recent_drops_[id];
  ++total_drops_[id];
}

std::size_t SendQueue::push(OutMessage m) {
  const ChannelId id = m.channel;
  const std::size_t n = cost(m);
  Channel& added = channels_[id];
  added.queue.push_back(std::move(m));
  added.bytes += n;
  bytes_ += n;
  ++messages_;
  std::size_t dropped = 0;
  while (bytes_ > budget_) {
    // The channel holding the most bytes, not counting the message just added.
    auto victim = channels_.end();
    std::size_t most = 0;
    for (auto it = channels_.begin(); it != channels_.end(); ++it) {
      const std::size_t held = it->first == id ? it->second.bytes - n : it->second.bytes;
      if (held > most) {
        most = held;
        victim = it;
      }
    }
    if (victim == channels_.end()) break;  // only the new message is left
    drop_oldest(victim->first, victim->second);
    ++dropped;
    if (victim->second.queue.empty()) channels_.erase(victim);
  }
  return dropped;
}

std::optional<OutMessage> SendQueue::pop() {
  if (channels_.empty()) return std::nullopt;
  auto it = last_served_ ? channels_.upper_bound(*last_served_) : channels_.begin();
  if (it == channels_.end()) it = channels_.begin();
  Channel& c = it->second;
  OutMessage m = std::move(c.queue.front());
  c.queue.pop_front();
  const std::size_t n = cost(m);
  c.bytes -= n;
  bytes_ -= n;
  --messages_;
  last_served_ = it->first;
  if (c.queue.empty()) channels_.erase(it);
  return m;
}

void SendQueue::remove_channel(ChannelId channel) {
  const auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  bytes_ -= it->second.bytes;
  messages_ -= it->second.queue.size();
  channels_.erase(it);
}

std::map<ChannelId, std::uint64_t> SendQueue::take_recent_drops() {
  return std::exchange(recent_drops_, {});
}

}  // namespace ferry::foxglove
