#pragma once
// Whether each node slot's node lives, as ferryd sees it: one state per slot,
// advanced by the event loop's events and by tick(now). It owns the slot's
// `state` word in the heartbeat table (heartbeats.hpp); the work a death
// causes is done through LivenessActions (node_reaper.hpp in ferryd, a fake
// in tests), and the clock is whatever `now` the caller passes.
//
// state         | event                                 | next          | who acts
// --------------+---------------------------------------+---------------+---------------------
// free          | joined (Hello answered)               | alive         | daemon gives the id;
//               |                                       |               | liveness writes pid,
//               |                                       |               | beat, `alive`
// alive         | beat within timeout_ms (tick)         | alive         | the node (beat_ms)
// alive         | silent past timeout_ms, must beat     | declared_dead | liveness writes
//               | (tick)                                |               | `declared_dead`;
//               |                                       |               | daemon drops client
// alive         | left (socket closed)                  | reclaiming    | liveness, actions
// declared_dead | left (the daemon dropped it)          | reclaiming    | actions reclaim
// reclaiming    | process gone (probe: at left, tick,   | free          | actions reclaim the
//               | probe_waiting)                        |               | rest, release lock
// (adopted)     | `alive` word, process lives (adopt)   | orphan        | adopt, at start
// (adopted)     | other non-free word (adopt)           | reclaiming    | finish_adoption
// orphan        | resumed (Hello from its slot and pid) | alive         | daemon, then joined
// orphan        | silent past timeout_ms (tick)         | reclaiming    | liveness writes
//               |                                       |               | `declared_dead`
// orphan        | its lock is free (tick's probe turn)  | reclaiming    | liveness, actions
//
// Slot words in shared memory: free, alive (alive and orphan), declared_dead
// (declared dead, and reclaiming after that), reclaiming (its socket
// closed, or found dead at adoption). A non-free word means "not finished": a ferryd killed at
// any point leaves it for its successor's adopt. The process probe (the node
// lock, node_lock.hpp) runs at most once a second per waiting slot
// (kProbePeriodMs), never on the beat path.

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ferry/discovery/heartbeats.hpp"

namespace ferry::discovery {

enum class NodeState : std::uint8_t { Free, Alive, DeclaredDead, Reclaiming, Orphan };

[[nodiscard]] const char* to_string(NodeState state) noexcept;

// What liveness asks of the rest of ferryd.
class LivenessActions {
 public:
  virtual ~LivenessActions() = default;
  // The one process probe: whether the process of node `owner` (pid as
  // ferryd recorded it) may still run.
  [[nodiscard]] virtual bool process_alive(std::uint16_t owner, pid_t pid) = 0;
  // Drops what node `owner` holds in the pool; `process_gone`: also the
  // chunks it was allocating and what it gave to dead nodes since.
  virtual void reclaim(std::uint16_t owner, bool process_gone) = 0;
  // The slot is free again: what marks its process (its lock file) goes.
  virtual void released(std::uint16_t owner) = 0;
};

class NodeLiveness {
 public:
  static constexpr std::uint64_t kProbePeriodMs = 1000;

  // A node of ferryd's that tick declared dead, or an orphan reclaimed.
  struct Death {
    std::uint16_t owner = 0;
    pid_t pid = 0;
    std::uint64_t silent_ms = 0;  // 0: an orphan whose lock was free
    bool orphan = false;
  };

  NodeLiveness(LivenessActions& actions, std::uint32_t timeout_ms) noexcept
      : actions_(actions), timeout_ms_(timeout_ms) {}

  // The heartbeat table to work on, once ferryd has one; forgets every slot.
  void attach(HeartbeatTable beats) noexcept;

  // A previous ferryd's table: its live nodes become orphans, its other
  // non-free slots reclaiming (reclaimed by finish_adoption, once the pool
  // is there). Returns the orphans.
  std::vector<Death> adopt(HeartbeatTable beats);
  // Reclaims the slots adopt found dead; returns how many.
  std::size_t finish_adoption();

  // free (or orphan resumed) -> alive: the node has timeout_ms from `now`.
  void joined(std::uint16_t owner, pid_t pid, std::uint64_t now);
  // orphan -> alive when `pid` is the orphan's: a node of the previous
  // ferryd is back. False otherwise (it is a new node then).
  bool resumed(std::uint16_t owner, pid_t pid);
  // Only nodes with ports must beat: a tool that only asks questions holds
  // nothing a frozen process could wedge.
  void set_must_beat(std::uint16_t owner, bool must_beat);
  // alive or declared_dead -> reclaiming -> free once its process is gone.
  void left(std::uint16_t owner);

  // Declares dead the silent nodes (returned: ferryd drops those it
  // serves) and orphans (reclaimed here), and, each kProbePeriodMs, frees
  // the dead whose processes have gone and reclaims orphans whose have.
  std::vector<Death> tick(std::uint64_t now);
  // Probes the waiting slots now (slot ids are short): frees those gone.
  void probe_waiting();

  [[nodiscard]] NodeState state(std::uint16_t owner) const;
  // ms since node `owner`'s last beat at `now` (a beat from the future is fresh).
  [[nodiscard]] std::uint64_t silent_ms(std::uint16_t owner, std::uint64_t now) const;
  // Whether the process of a non-free slot may still run (the probe).
  [[nodiscard]] bool process_alive(std::uint16_t owner);
  // Dead slots whose processes live on (stopped ones).
  [[nodiscard]] std::size_t waiting() const;

 private:
  struct Slot {
    NodeState state = NodeState::Free;
    pid_t pid = 0;
    bool must_beat = false;
    bool declared = false;  // its word is declared_dead (the node reads it)
  };
  void write(std::uint16_t owner, SlotState word, std::memory_order order);
  void reclaim(std::uint16_t owner, Slot& slot);
  void finish(std::uint16_t owner);

  LivenessActions& actions_;
  std::uint32_t timeout_ms_;
  HeartbeatTable beats_;
  std::unordered_map<std::uint16_t, Slot> slots_;  // every slot not free
  std::uint64_t last_probe_ = 0;
};

}  // namespace ferry::discovery
