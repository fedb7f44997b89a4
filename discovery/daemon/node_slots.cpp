#include "node_slots.hpp"

#include <algorithm>

namespace ferry::discovery {

NodeSlots::NodeSlots(std::uint32_t capacity)
    : capacity_(std::clamp<std::uint32_t>(capacity, 1, 65535)) {}

std::optional<std::uint16_t> NodeSlots::take() {
  if (next_fresh_ <= capacity_) return static_cast<std::uint16_t>(next_fresh_++);
  if (free_.empty()) return std::nullopt;
  const std::uint16_t id = free_.front();
  free_.pop_front();
  return id;
}

void NodeSlots::reserve(std::uint16_t owner) {
  if (owner == 0) return;
  std::erase(free_, owner);
  std::erase_if(retired_, [owner](const Retired& r) { return r.owner == owner; });
  // Ids skipped on the way are free (nobody had them in this daemon's view).
  while (next_fresh_ <= owner) {
    if (next_fresh_ != owner) free_.push_back(static_cast<std::uint16_t>(next_fresh_));
    ++next_fresh_;
  }
}

void NodeSlots::continue_from(std::uint32_t next) {
  next_fresh_ = std::max(next_fresh_, std::min<std::uint32_t>(next, 65536));
}

void NodeSlots::retire(std::uint16_t owner, pid_t pid) {
  if (owner == 0 || owner >= next_fresh_) return;
  retired_.push_back({owner, pid});
}

std::size_t NodeSlots::recycle(const std::function<bool(const Retired&)>& reusable) {
  std::size_t freed = 0;
  std::erase_if(retired_, [&](const Retired& r) {
    if (!reusable(r)) return false;
    free_.push_back(r.owner);
    ++freed;
    return true;
  });
  return freed;
}

}  // namespace ferry::discovery
