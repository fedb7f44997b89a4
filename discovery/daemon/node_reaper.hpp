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

namespace ferry::discovery {

class NodeReaper {
 public:
  NodeReaper(std::string domain, std::filesystem::path runtime_dir)
      : domain_(std::move(domain)), runtime_dir_(std::move(runtime_dir)) {}

  // The pool and heartbeat table to work on, once ferryd has them.
  void attach(transport::Pool& pool, HeartbeatTable beats) noexcept {
    pool_ = &pool;
    beats_ = beats;
  }

  // Whether the process of the node in slot `owner` may still run (its lock;
  // without one, the pid ferryd recorded).
  [[nodiscard]] bool process_alive(std::uint16_t owner) const;

  // Node `owner` is dead: `state` (reclaiming or declared_dead) goes into
  // its slot first, then everything is reclaimed; the slot is freed now if
  // its process is gone, else by tick() once it is.
  void node_died(std::uint16_t owner, SlotState state);

  // ferryd's periodic turn: finishes the nodes whose processes have gone.
  void tick();

  // Nodes dead but not finished (their processes live on: stopped ones).
  [[nodiscard]] std::size_t waiting() const noexcept { return waiting_.size(); }

  // ferryd stops: the lock files of its domain go with its objects.
  void remove_all_locks() const;

 private:
  [[nodiscard]] std::filesystem::path lock_path(std::uint16_t owner) const;
  void reclaim(std::uint16_t owner, bool process_gone);
  void finish(std::uint16_t owner);

  std::string domain_;
  std::filesystem::path runtime_dir_;
  transport::Pool* pool_ = nullptr;
  HeartbeatTable beats_;
  std::vector<std::uint16_t> waiting_;  // dead, their processes not gone yet
};

}  // namespace ferry::discovery
