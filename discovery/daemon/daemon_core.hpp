#pragma once
// ferryd's decisions, apart from its sockets: the way Aeron's conductor is
// split from its transport. One thread calls the core with the clock's `now`
// (monotonic ms, the clock the nodes beat with: heartbeats.hpp) and with
// what happened (a connection, a decoded message, a hang-up, a tick); it
// answers with effects (daemon_effects.hpp) that the shell (daemon_io.hpp)
// carries out in order. It owns the registry, the node slots, their liveness
// and the connections' state; rings are made through ShmFactory and a dead
// node's reclaim goes through LivenessActions (node_reaper.hpp), both
// injected, so that a test drives it with fakes, a heartbeat table on the
// heap, no socket and no sleep (tests/discovery/test_daemon_core.cpp).
//
// Ordering the shell relies on: a request's reply comes before the
// notifications it causes (Registry's rule); a dead node is reclaimed (its
// slot word first, node_liveness.hpp) before the Unmatched to its peers are
// returned, so a publisher revokes what it gives the node from then on once
// it has applied its Unmatched; a slot's ReclaimSlot comes before the
// Welcome that gives it again.

#include <spdlog/spdlog.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "client_access.hpp"
#include "daemon_effects.hpp"
#include "ferry/config/config.hpp"
#include "ferry/discovery/heartbeats.hpp"
#include "log_limiter.hpp"
#include "node_liveness.hpp"
#include "node_slots.hpp"
#include "registry.hpp"

namespace ferry::discovery {

// A configuration file as ferryd read it: the text is kept for GetConfig.
struct LoadedConfig {
  config::Config config;
  std::string text;
};

// What the core is told of the domain's pool, made by the shell at start:
// a reload must fit it (the pool cannot grow while nodes map it).
struct PoolFacts {
  std::uint64_t max_chunk_size = 0;
  std::uint64_t chunks = 0;  // in every class
  std::uint32_t holder_nodes = 0;
};

// SO_PEERCRED of a connection.
struct Credentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct DaemonCoreSettings {
  ClientAccessPolicy access;  // its domain is the core's
  // The configuration as loaded, served to tools by GetConfig.
  std::string config_source;
  std::string config_text;
  std::size_t max_connections = 1024;  // connection_limit() (daemon_io.hpp)
};

class DaemonCore {
 public:
  DaemonCore(DaemonCoreSettings settings, const config::Config& config, ShmFactory& shm,
             LivenessActions& actions, GroupMembership is_member = user_in_group);

  // The connection limit (connection_limit(), daemon_io.hpp).
  void set_max_connections(std::size_t limit) noexcept { settings_.max_connections = limit; }

  // Start (daemon_core_start.cpp), exactly one of: a fresh, zeroed heartbeat
  // table; or a previous ferryd's, in two steps around opening its pool:
  // adopt_slots (its live nodes, none: start fresh instead), then
  // finish_adoption once the reaper works on the pool and this table.
  void start_fresh(HeartbeatTable beats, const PoolFacts& pool, std::uint64_t now);
  [[nodiscard]] std::vector<NodeLiveness::Death> adopt_slots(HeartbeatTable beats);
  // `highest_named_id`: the highest id the domain's objects name
  // (resumed_ids.hpp). Returns how many dead nodes adoption reclaimed.
  std::size_t finish_adoption(HeartbeatTable beats, const PoolFacts& pool,
                              std::uint64_t highest_named_id, std::uint64_t now);

  // Events. A connection the shell accepted, with its credentials (or why
  // there are none): admitted, or refused with an error and closed.
  [[nodiscard]] Effects connected(std::uint64_t now, ConnectionId connection,
                                  const std::expected<Credentials, std::string>& credentials);
  // One decoded message (daemon_handlers.cpp).
  [[nodiscard]] Effects received(std::uint64_t now, ConnectionId connection,
                                 std::uint32_t request_id, const Message& message);
  // A datagram that does not decode: the client is told and dropped.
  [[nodiscard]] Effects malformed(std::uint64_t now, ConnectionId connection,
                                  const std::string& why);
  // The connection is gone (the peer closed it: the node's immediate death),
  // or its socket failed (`why` says how, for the log).
  [[nodiscard]] Effects hung_up(ConnectionId connection, const std::string& why = {});
  // The timer: ferryd's own beat, nodes silent past timeout_ms, connections
  // that did not say Hello in time.
  [[nodiscard]] Effects tick(std::uint64_t now);
  // SIGHUP's result (daemon_core_reload.cpp): applied whole, or refused
  // with the reason logged and the old configuration kept.
  void reload(std::variant<LoadedConfig, std::string> result);

  // Stop: nodes whose process lives (`still_open`: their connection was not
  // closed before the signal) and orphans of a previous ferryd that do.
  [[nodiscard]] std::size_t live_nodes(const std::function<bool(ConnectionId)>& still_open);
  // Remembers the id counters in the heartbeat table, for the next ferryd.
  void save_counters();

  [[nodiscard]] const NodeLiveness& liveness() const noexcept { return liveness_; }
  [[nodiscard]] const Registry& registry() const noexcept { return registry_; }
  [[nodiscard]] const std::string& domain() const noexcept { return settings_.access.domain; }
  [[nodiscard]] std::size_t connection_count() const noexcept { return connections_.size(); }
  // Name and pid of a connection, for the shell's log; nullptr if unknown.
  struct Who {
    std::string name;  // empty until Hello
    pid_t pid = 0;
  };
  [[nodiscard]] const Who* who(ConnectionId connection) const;

  // Logs at most one line a second per `key`, with the count of the others.
  template <class... Args>
  void log_limited(std::uint64_t now, const std::string& key, spdlog::level::level_enum level,
                   fmt::format_string<Args...> format, Args&&... args);

 private:
  struct Connection {
    Who who;
    uid_t uid = 0;
    gid_t gid = 0;
    std::uint64_t node_id = 0;       // 0 until Hello
    std::uint16_t owner = 0;         // node slot (pool owner id), given with Welcome
    std::uint64_t connected_at = 0;  // for the Hello deadline
  };
  struct Context {  // one event's: when, whose, what to answer
    std::uint64_t now;
    ConnectionId id;
    Connection& connection;
    std::uint32_t request_id;
    Effects& out;
    void reply(Message message, std::optional<std::uint16_t> node_lock = std::nullopt) const {
      out.push_back(SendMessage{id, request_id, std::move(message), node_lock});
    }
  };

  // Message handlers (daemon_handlers.cpp): false drops the client.
  bool on(const Context& c, const Hello& hello);
  bool on(const Context& c, const ListTopics& list);
  bool on(const Context& c, const ListNodes& list);
  bool on(const Context& c, const GetConfig& get);
  bool on(const Context& c, const Ping& ping);
  bool on(const Context& c, const CreatePublisher& request);
  bool on(const Context& c, const CreateSubscriber& request);
  bool on(const Context& c, const DestroyPort& request);
  bool on(const Context& c, const QueueReleased& released);
  template <class M>
  bool on(const Context& c, const M& message);  // what a client may not send
  // A node's slot: its own again (resumed) or a free one; nullopt refused.
  std::optional<std::uint16_t> slot_for(const Context& c, const Hello& hello, bool& resumed);
  bool port_reply(const Context& c, bool publisher, const PortRequest& request);
  // Whether the client said Hello; if not, it is told so (and dropped).
  bool registered(const Context& c);
  // After a port request: whether the node must beat, the counters, and
  // the notifications it caused (after its reply).
  bool port_done(const Context& c, const Outbox& notifications);
  [[nodiscard]] NodeList node_list(std::uint32_t start, std::uint64_t now) const;
  [[nodiscard]] ConfigText config_page(std::uint32_t offset) const;

  // Forgets the connection, and its node: retired slot, ports removed (its
  // peers told: `reason`), reclaimed. Ends with its CloseConnection.
  void drop(ConnectionId id, const std::string& why, Effects& out,
            UnmatchReason reason = UnmatchReason::PeerClosed);
  void send_notifications(const Outbox& notifications, Effects& out) const;
  void check_liveness(std::uint64_t now, Effects& out);
  void expire_silent_clients(std::uint64_t now, Effects& out);
  // When fresh node slots run out: those whose process is gone become free.
  void recycle_node_slots(Effects& out);
  // After adopting a predecessor's table: the slots of its nodes that are
  // not coming back are retired (free once their process is gone).
  void retire_adopted_slots();
  void write_liveness_header();

  DaemonCoreSettings settings_;
  GroupMembership is_member_;
  config::Liveness liveness_config_;
  config::DaemonLimits limits_;
  PoolFacts pool_;
  Registry registry_;
  HeartbeatTable beats_;
  NodeSlots node_slots_;  // node slots: pool owner ids and heartbeat slots
  // Every slot's state (node_liveness.hpp), orphans of a previous ferryd too.
  NodeLiveness liveness_;
  std::uint32_t adopted_highest_ = 0;          // the adopted table's highest used slot
  std::optional<std::uint64_t> last_recycle_;  // the Hello path recycles at most 10/s
  LogLimiter log_limiter_;
  std::map<ConnectionId, Connection> connections_;
  std::map<std::uint64_t, ConnectionId> node_connections_;  // node id -> its connection
  std::map<std::uint64_t, std::uint64_t> joined_;           // node id -> `now` of its Hello
};

template <class... Args>
void DaemonCore::log_limited(std::uint64_t now, const std::string& key,
                             spdlog::level::level_enum level, fmt::format_string<Args...> format,
                             Args&&... args) {
  std::uint64_t suppressed = 0;
  const LogLimiter::Clock::time_point at{std::chrono::milliseconds(now)};
  if (!log_limiter_.allow(key, suppressed, at)) return;
  const std::string line = fmt::format(format, std::forward<Args>(args)...);
  if (suppressed == 0) {
    spdlog::log(level, "{}", line);
  } else {
    spdlog::log(level, "{} ({} more like it in the last second not logged)", line, suppressed);
  }
}

}  // namespace ferry::discovery
