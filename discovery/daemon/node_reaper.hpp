#pragma once
// ferryd's reclaim of dead nodes: exact, and durable across its own crash.
//
// A node's heartbeat slot goes alive -> reclaiming (socket closed) or
// declared_dead (no heartbeat) BEFORE anything of it is reclaimed, and to
// free only once everything is: the pool references it held, what it gave to
// nodes that are dead too, and, once its process is gone (its node lock,
// node_lock.hpp), the chunks it was in the middle of allocating. A ferryd
// killed at any point leaves the slot non-free; the next one finishes it
// when it adopts the domain (each step is idempotent).
//
// What a publisher gives a dead subscriber AFTER its reclaim (it was stopped
// or descheduled mid-publish, or published before it applied the Unmatched)
// is not re-reclaimed here on a timer: the publisher revokes it itself once
// its publishing thread has dropped the queue (PublisherState::
// apply_changes), and if the publisher dies first, its own reclaim drops
// what it gave to dead nodes (`dead_receiver`, below).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ferry/discovery/heartbeats.hpp"
#include "ferry/transport/pool.hpp"
#include "node_liveness.hpp"

namespace ferry::discovery {

// The work a node's death causes, for NodeLiveness (node_liveness.hpp), which
// decides when: the pool reclaim, the node lock probe and file.
class NodeReaper final : public LivenessActions {
 public:
  NodeReaper(std::string domain, std::filesystem::path runtime_dir)
      : domain_(std::move(domain)), runtime_dir_(std::move(runtime_dir)) {}
  // Where the nodes' lock files are (ferryd's socket's directory).
  [[nodiscard]] const std::filesystem::path& runtime_dir() const noexcept { return runtime_dir_; }

  // The pool and heartbeat table to work on, once ferryd has them.
  void attach(transport::Pool& pool, HeartbeatTable beats) noexcept {
    pool_ = &pool;
    beats_ = beats;
  }

  // Its lock; without one, `pid` (node_lock.hpp).
  [[nodiscard]] bool process_alive(std::uint16_t owner, pid_t pid) override;
  void reclaim(std::uint16_t owner, bool process_gone) override;
  // Removes the node's lock file.
  void released(std::uint16_t owner) override;

  // ferryd stops: the lock files of its domain go with its objects.
  void remove_all_locks() const;

 private:
  [[nodiscard]] std::filesystem::path lock_path(std::uint16_t owner) const;

  std::string domain_;
  std::filesystem::path runtime_dir_;
  transport::Pool* pool_ = nullptr;
  HeartbeatTable beats_;
};

}  // namespace ferry::discovery
