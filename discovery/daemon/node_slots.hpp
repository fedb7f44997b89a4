#pragma once
// Node slots (pool owner ids, heartbeat slot indices) handed out by ferryd,
// and given again once nothing can still use them. An id ends up in the
// heartbeat table, in pool holder words and in peers' Matched notes, so a
// slot is reused only after its node's process is gone (it can allocate
// with the id no more) and the daemon has finished reclaiming it (the caller
// decides both in `recycle`). Until then it is retired, not free. Fresh ids
// go first, then the longest-free one: an id comes back as late as the
// space allows, so a peer that is slow to hear of a node's death has all
// that time to stop using its id.

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

namespace ferry::discovery {

class NodeSlots {
 public:
  struct Retired {
    std::uint16_t owner = 0;
    pid_t pid = 0;  // the process that had it
  };

  // Ids 1..capacity (at most 65535: ids are 16-bit and 0 is nobody).
  explicit NodeSlots(std::uint32_t capacity);

  // A free id, or nullopt when every one is in use or retired.
  [[nodiscard]] std::optional<std::uint16_t> take();
  // Marks `owner` in use (a node of the previous ferryd that resumes it or
  // may still come back). Ids up to it are no longer fresh.
  void reserve(std::uint16_t owner);
  // Ids below `next` were given by a previous ferryd: not fresh.
  void continue_from(std::uint32_t next);
  // The node that had `owner` left; the id is retired until recycled.
  void retire(std::uint16_t owner, pid_t pid);
  // Frees every retired id for which `reusable` says yes; returns how many.
  std::size_t recycle(const std::function<bool(const Retired&)>& reusable);

  // The next id never given yet, for the next ferryd (heartbeat header).
  [[nodiscard]] std::uint32_t next_fresh() const noexcept { return next_fresh_; }
  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::size_t retired_count() const noexcept { return retired_.size(); }
  [[nodiscard]] std::size_t in_use() const noexcept {
    return (next_fresh_ - 1) - free_.size() - retired_.size();
  }

 private:
  std::uint32_t capacity_;
  std::uint32_t next_fresh_ = 1;
  std::deque<std::uint16_t> free_;  // oldest first
  std::vector<Retired> retired_;
};

}  // namespace ferry::discovery
