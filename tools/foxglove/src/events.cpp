#include "events.hpp"

namespace ferry::foxglove {

void EventHandoff::push(std::vector<PumpEvent>& events, std::size_t bytes) {
  if (events.empty()) return;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (events_.empty()) {
      events_.swap(events);
    } else {
      events_.insert(events_.end(), std::make_move_iterator(events.begin()),
                     std::make_move_iterator(events.end()));
    }
    bytes_ += bytes;
    wake = !std::exchange(wake_pending_, true);
  }
  events.clear();
  if (wake && wake_) wake_();
}

bool EventHandoff::full() const {
  std::lock_guard lock(mutex_);
  return bytes_ >= byte_limit_;
}

void EventHandoff::wait_for_room(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  room_.wait_for(lock, timeout, [this] { return closed_ || bytes_ < byte_limit_; });
}

std::vector<PumpEvent> EventHandoff::take() {
  std::vector<PumpEvent> out;
  {
    std::lock_guard lock(mutex_);
    out.swap(events_);
    bytes_ = 0;
    wake_pending_ = false;
  }
  room_.notify_all();
  return out;
}

void EventHandoff::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  room_.notify_all();
}

}  // namespace ferry::foxglove
