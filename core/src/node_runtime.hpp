#pragma once
// A node's connection to ferryd and the thread that serves it. The thread is
// the only reader of the socket: it hands replies to the thread that sent the
// request and applies Matched/Unmatched notifications to the ports. It never
// touches the hot path; ports pick up changes themselves (port_state.hpp).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ferry/discovery/client.hpp"
#include "ferry/discovery/heartbeats.hpp"
#include "ferry/discovery/messages.hpp"
#include "ferry/node.hpp"
#include "ferry/transport/segment.hpp"
#include "lock_order.hpp"

namespace ferry::detail {

class PortState;
struct DomainPoolView;
class PublisherState;
class SubscriberState;

class NodeRuntime : public std::enable_shared_from_this<NodeRuntime> {
 public:
  // Connects and registers; throws ferry::Error (naming the socket and how to
  // start ferryd) when the daemon cannot be reached.
  static std::shared_ptr<NodeRuntime> start(std::string name, const NodeOptions& options);
  ~NodeRuntime();
  NodeRuntime(const NodeRuntime&) = delete;
  NodeRuntime& operator=(const NodeRuntime&) = delete;

  // Throw ferry::Error when ferryd refuses the port.
  std::shared_ptr<PublisherState> create_publisher(std::string_view topic, const TypeInfo& type);
  // `observer`: see SubscriberOptions::observer.
  std::shared_ptr<SubscriberState> create_subscriber(std::string_view topic, const TypeInfo& type,
                                                     bool observer);
  // Tells ferryd the port is gone; does not wait for the answer. A port of
  // an earlier session (before the node rejoined) is forgotten silently.
  void destroy_port(const PortState& port) noexcept;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& domain() const noexcept { return domain_; }
  // ferryd's sentence when it declared this node dead; empty while alive.
  // In a child forked after the node was made, the sentence saying so.
  [[nodiscard]] std::string declared_dead() const;
  // Whether a ferryd answers on our connection now (false while reconnecting).
  [[nodiscard]] bool connected() const {
    std::lock_guard lock(mutex_);
    return connected_;
  }
  // Whether this process is a child forked after the node was made: the
  // node is its parent's (fork_guard.hpp) and every request is refused.
  [[nodiscard]] bool inherited() const noexcept;

 private:
  // One connection to ferryd: the node's identity in the domain while it lasts.
  struct Session {
    discovery::Client client;
    // Our owner id's view of the pool; also holds the heartbeat table's
    // mapping, shared with the ports (they read our slot's state).
    std::shared_ptr<DomainPoolView> pool;
    discovery::HeartbeatTable beats;                // that table (empty without one)
    discovery::HeartbeatSlot* beat_slot = nullptr;  // ours in it
  };
  static Session open_session(const std::string& name, const std::string& domain,
                              std::chrono::milliseconds request_timeout);
  NodeRuntime(std::string name, std::string domain, std::chrono::milliseconds request_timeout,
              Session session);
  // A node declared dead (or left without a daemon) joins again: a new
  // connection and owner id. Ports of the old session stay dead.
  void rejoin();
  // Runtime thread: our beat, and whether ferryd has declared us dead.
  void beat(std::uint64_t& last_beat_ms);
  // Runtime thread, when ferryd went away: tries again with backoff (and
  // keeps beating) until a daemon answers; re-registers every port with it.
  // False when we should stop (shutting down, or our state is gone).
  bool reconnect(std::uint64_t& last_beat_ms);
  // Runtime thread: drops queues of a previous ferryd whose peer is gone.
  void check_old_peers();
  void mark_dead(const std::string& why);

  struct PendingPort {
    bool publisher = false;
    std::string topic;
    discovery::PortRequest request;
  };
  // Sends a port request; the runtime thread builds the port state when the
  // reply arrives (before any Matched for it is read) and hands it back.
  std::shared_ptr<PortState> request_port(bool publisher, std::string_view topic,
                                          const TypeInfo& type, bool observer = false);
  void serve();
  void on_message(std::uint32_t request_id, discovery::Message message);
  void on_port_created(std::uint32_t request_id, const discovery::PortCreated& created);

  // Throws ferry::Error in a forked child: the node is its parent's.
  void refuse_if_inherited(std::string_view what) const;

  const std::string name_;
  const std::string domain_;
  const std::chrono::milliseconds request_timeout_;
  const pid_t pid_;                      // the process that made the node
  const std::uint64_t fork_generation_;  // fork_generation() when it was made
  // Three mutexes, taken in this order (lock_order.hpp, ranks 1 to 3).
  RankedMutex<LockRank::NodeRejoin> rejoin_mutex_;  // one rejoin at a time (user threads)
  // Replaced only by rejoin(), with the runtime thread joined and both
  // mutexes below held.
  Session session_;
  // Guards session_.client.send (ids and the socket's write side).
  RankedMutex<LockRank::NodeSend> send_mutex_;

  mutable RankedMutex<LockRank::NodeRuntime> mutex_;  // guards everything below
  std::condition_variable_any replied_;               // any: mutex_ is a RankedMutex
  std::map<std::uint32_t, PendingPort> pending_;      // request id -> what was asked
  struct Reply {
    std::optional<discovery::Message> message;
    std::shared_ptr<PortState> port;
    std::string failure;
  };
  std::map<std::uint32_t, Reply> replies_;
  std::map<std::uint64_t, std::weak_ptr<PortState>> ports_;
  // Re-registrations after a daemon restart: request id -> the port.
  std::map<std::uint32_t, std::weak_ptr<PortState>> resuming_;
  // Doorbell names of destroyed subscriber ports whose DestroyPort ferryd
  // has not answered yet (request id -> name): removed by the node if the
  // connection is lost first (destroy_port, reconnect).
  std::map<std::uint32_t, std::string> destroying_bells_;
  bool connected_ = true;
  std::uint64_t session_number_ = 0;  // bumped with every new connection
  std::string dead_reason_;           // ferryd's node_expired sentence

  // Runtime thread only: check_old_peers()'s list of live ports.
  std::vector<std::shared_ptr<PortState>> old_peer_scan_;

  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ferry::detail
