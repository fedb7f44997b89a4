#pragma once
// ferryd's event loop: one thread, epoll over the listening socket, the
// clients, a signalfd (SIGINT/SIGTERM) and a timer. It is never on the data
// path: it matches ports, creates the rings and tells both sides.
// Construct it in the process that runs it: the signalfd's readiness reaches
// only the epoll of the process that registered it, so a Daemon carried over
// a fork() would never see its SIGTERM (ferryd detaches first, then builds it).

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "client_access.hpp"
#include "client_outbox.hpp"
#include "domain_pool.hpp"
#include "ferry/config/config.hpp"
#include "ferry/discovery/heartbeats.hpp"
#include "ferry/discovery/socket.hpp"
#include "log_limiter.hpp"
#include "node_liveness.hpp"
#include "node_reaper.hpp"
#include "owner_ids.hpp"
#include "registry.hpp"
#include "service_notifier.hpp"
#include "shm_factory.hpp"

namespace ferry::discovery {

struct DaemonOptions {
  std::string domain;
  std::string socket_path;
  mode_t object_mode = 0600;           // 0660 with --group
  std::optional<AdmittedGroup> group;  // --group: its members may connect too
  // The configuration as loaded, served to tools by GetConfig.
  std::string config_source;
  std::string config_text;
  // Monotonic ms for heartbeats (the nodes' clock, monotonic_ms); tests
  // driving poll_once inject their own.
  std::function<std::uint64_t()> clock = monotonic_ms;
};

// The connection limit: `limits.max_connections`, or when 0 the process's
// file-descriptor limit (RLIMIT_NOFILE) less a reserve for the daemon's own
// files and shared-memory objects.
[[nodiscard]] std::size_t connection_limit(const config::DaemonLimits& limits);

// Blocks SIGINT, SIGTERM and SIGHUP in this process and returns them: from then on
// they stay pending until a Daemon's signalfd reads them, so a signal sent
// as soon as the socket is reachable still stops the daemon cleanly.
sigset_t block_stop_signals();

// A configuration file as SIGHUP reads it: the text is kept for GetConfig.
struct LoadedConfig {
  config::Config config;
  std::string text;
};

// SIGHUP's reading thread and what it read: a configuration, or why not.
struct ReloadJob {
  std::variant<std::monostate, LoadedConfig, std::string> result;
  std::thread thread;
  ~ReloadJob() {
    if (thread.joinable()) thread.join();
  }
};

class Daemon {
 public:
  Daemon(DaemonOptions options, const config::Config& config, UnixSeqpacketSocket listener);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until SIGINT or SIGTERM; then removes its socket, and the
  // domain's objects unless nodes live (they keep the domain for the next
  // ferryd). Returns the process exit code.
  int run();
  // One turn of run()'s loop: waits up to `timeout` for events, advances
  // liveness to the injected clock's now and serves what came. Returns the
  // exit code once a stop signal was served (shut down), else nullopt.
  // Tests drive it in-process; run() is ready() and this in a loop.
  std::optional<int> poll_once(std::chrono::milliseconds timeout);
  [[nodiscard]] const NodeLiveness& liveness() const noexcept { return liveness_; }
  // After run(): the domain's objects are gone (no node was left), so its
  // lock can go too.
  [[nodiscard]] bool domain_removed() const noexcept { return domain_removed_; }

 private:
  struct Client {
    UnixSeqpacketSocket socket;
    std::uint64_t node_id = 0;  // 0 until Hello
    std::uint16_t owner = 0;    // pool owner id, given with Welcome
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string name;
    bool broken = false;  // a send failed: drop it after this event
    std::chrono::steady_clock::time_point connected_at{};  // for the Hello deadline
    ClientOutbox outbox;  // what its socket did not take yet (client_outbox.hpp)
  };

  // Start: takes over a previous ferryd's pool and heartbeat table when
  // nodes it served still live (they reconnect); false when there is
  // nothing to adopt (the caller then starts clean).
  bool adopt_live_state();
  // Throws when another user's object holds a name this daemon needs; logs
  // the others, which stay where they are.
  void refuse_foreign_objects();
  void create_heartbeat_table();
  // Remembers the id counters in the table, for the next ferryd.
  void save_counters();
  // Heartbeats: drops every node liveness declares dead (no beat for
  // timeout_ms), retires the orphans it reclaimed.
  void check_liveness();

  void accept_clients();
  // Accepts one waiting connection only to tell it the connection limit is
  // reached, and closes it; false when none was waiting.
  bool refuse_over_limit();
  // EMFILE/ENFILE: the listener is left alone for a short back-off instead
  // of being polled (level-triggered) in a busy loop.
  void pause_accepting(const std::string& why);
  void resume_accepting_when_due();
  // Closes connections that did not say Hello within hello_timeout_ms.
  void expire_silent_clients();
  // When fresh node slots run out: those whose process is gone become free.
  void recycle_owner_ids();
  // After adopting a predecessor's table: the slots of its nodes that are
  // not coming back are retired (free once their process is gone).
  void retire_adopted_slots();
  // Logs at most one line a second per `key`, with the count of the others.
  template <class... Args>
  void log_limited(const std::string& key, spdlog::level::level_enum level,
                   fmt::format_string<Args...> format, Args&&... args);
  // False when the client must be dropped.
  bool serve(Client& client);
  bool handle(Client& client, std::uint32_t request_id, const Message& message);
  void drop(int fd, const std::string& why, UnmatchReason reason = UnmatchReason::peer_closed);
  void drop_broken();
  // `attached_fd` >= 0 travels with the message (see UnixSeqpacketSocket::send).
  void send_to(Client& client, std::uint32_t request_id, const Message& message,
               int attached_fd = -1);
  void deliver(const Outbox& out);
  // EPOLLOUT: sends what the client's outbox holds, as far as it goes.
  void flush_outbox(Client& client);
  // Polls the client's socket for EPOLLOUT too while its outbox is not empty.
  void watch_writable(int fd, bool writable);
  [[nodiscard]] NodeList node_list(std::uint32_t start) const;
  [[nodiscard]] ConfigText config_page(std::uint32_t offset) const;
  void shutdown();
  // SIGHUP: re-reads the YAML (daemon_reload.cpp) on a thread of its own,
  // so that the loop goes on serving while a large file is parsed; the
  // result is applied on the loop when the thread says it is done.
  void reload();
  void finish_reload();
  std::unique_ptr<ReloadJob> reload_job_;
  bool reload_again_ = false;  // a SIGHUP came while a reload was reading
  int reload_fd_ = -1;         // eventfd: the reading thread is done
  // Whose objects this daemon trusts: its uid, its configured mode at most.
  [[nodiscard]] transport::ObjectOwner object_owner() const;
  bool domain_removed_ = false;
  ServiceNotifier notifier_;  // systemd: readiness, reload, stop, watchdog

  DaemonOptions options_;
  ClientAccessPolicy access_;
  config::Liveness liveness_config_;
  UnixSeqpacketSocket listener_;
  ShmObjects shm_;
  Registry registry_;
  std::optional<DomainPool> pool_;                       // made after the stale objects are gone
  std::optional<transport::Segment> heartbeat_segment_;  // "ferry.<domain>.registry"
  HeartbeatTable beats_;
  config::DaemonLimits limits_;
  std::size_t max_connections_ = 0;  // limits_.max_connections, or from RLIMIT_NOFILE
  OwnerIds owner_ids_;               // node slots: pool owner ids and heartbeat slots
  std::chrono::steady_clock::time_point last_recycle_{};  // the Hello path recycles at most 10/s
  LogLimiter log_limiter_;
  bool accepting_ = true;  // false during an EMFILE back-off
  std::chrono::steady_clock::time_point resume_accepting_at_{};
  // Dead nodes: reclaimed exactly, their slots freed once complete
  // (node_reaper.hpp); owner_ids_ gives a slot again only after that.
  NodeReaper reaper_;
  // Every slot's state (node_liveness.hpp), orphans of a previous ferryd too.
  NodeLiveness liveness_;
  int wait_ms_ = 1000;  // run()'s longest wait
  int epoll_fd_ = -1;
  int signal_fd_ = -1;
  std::map<int, Client> clients_;                                          // by socket fd
  std::map<std::uint64_t, int> node_fds_;                                  // node id -> socket fd
  std::map<std::uint64_t, std::chrono::steady_clock::time_point> joined_;  // node id -> its Hello
};

template <class... Args>
void Daemon::log_limited(const std::string& key, spdlog::level::level_enum level,
                         fmt::format_string<Args...> format, Args&&... args) {
  std::uint64_t suppressed = 0;
  if (!log_limiter_.allow(key, suppressed)) return;
  const std::string line = fmt::format(format, std::forward<Args>(args)...);
  if (suppressed == 0) {
    spdlog::log(level, "{}", line);
  } else {
    spdlog::log(level, "{} ({} more like it in the last second not logged)", line, suppressed);
  }
}

}  // namespace ferry::discovery
