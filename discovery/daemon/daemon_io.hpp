#pragma once
// ferryd's shell around its core (daemon_core.hpp): one thread, epoll over
// the listening socket, the clients, a signalfd (SIGINT/SIGTERM/SIGHUP) and
// a timer; systemd's notifications; the domain's shared memory made or
// adopted at start. It reads the clock once per event, hands the core
// decoded messages and ticks with that `now`, and carries out the effects
// the core returns, in order. It is never on the data path.
// Construction does no system work; start() does, and says why it failed.
// Start it in the process that runs it: the signalfd's readiness reaches
// only the epoll of the process that registered it, so a daemon carried over
// a fork() would never see its SIGTERM (ferryd detaches first, then starts).

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "client_access.hpp"
#include "client_outbox.hpp"
#include "daemon_core.hpp"
#include "domain_pool.hpp"
#include "ferry/config/config.hpp"
#include "ferry/discovery/heartbeats.hpp"
#include "ferry/discovery/socket.hpp"
#include "ferry/transport/object_trust.hpp"
#include "node_reaper.hpp"
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
  // ferryd's one clock, monotonic ms (the nodes' heartbeat clock,
  // monotonic_ms); tests driving poll_once inject their own.
  std::function<std::uint64_t()> clock = monotonic_ms;
};

// The connection limit: `limits.max_connections`, or when 0 the process's
// file-descriptor limit (RLIMIT_NOFILE) less a reserve for the daemon's own
// files and shared-memory objects.
[[nodiscard]] std::size_t connection_limit(const config::DaemonLimits& limits);

// Blocks SIGINT, SIGTERM and SIGHUP in this process and returns them: from then on
// they stay pending until a daemon's signalfd reads them, so a signal sent
// as soon as the socket is reachable still stops the daemon cleanly.
sigset_t block_stop_signals();

// SIGHUP's reading thread and what it read: a configuration, or why not.
struct ReloadJob {
  std::variant<std::monostate, LoadedConfig, std::string> result;
  std::thread thread;
  ~ReloadJob() {
    if (thread.joinable()) thread.join();
  }
};

class DaemonIo {
 public:
  DaemonIo(DaemonOptions options, const config::Config& config, UnixSeqpacketSocket listener);
  ~DaemonIo();
  DaemonIo(const DaemonIo&) = delete;
  DaemonIo& operator=(const DaemonIo&) = delete;

  // Blocks the stop signals and opens the signalfd, refuses another user's
  // objects, adopts the domain a previous ferryd left to live nodes or
  // removes its stale objects and makes the pool and heartbeat table, then
  // the epoll set (daemon_io_start.cpp). The error is one sentence.
  [[nodiscard]] std::expected<void, std::string> start();
  // After start(): serves until SIGINT or SIGTERM; then removes its socket,
  // and the domain's objects unless nodes live (they keep the domain for
  // the next ferryd). Returns the process exit code.
  int run();
  // One turn of run()'s loop: waits up to `timeout` for events, ticks the
  // core at the clock's now and serves what came. Returns the exit code
  // once a stop signal was served (shut down), else nullopt. Tests drive it
  // in-process; run() is ready() and this in a loop.
  std::optional<int> poll_once(std::chrono::milliseconds timeout);
  [[nodiscard]] const DaemonCore& core() const noexcept { return core_; }
  // After run(): the domain's objects are gone (no node was left), so its
  // lock can go too.
  [[nodiscard]] bool domain_removed() const noexcept { return domain_removed_; }

 private:
  // epoll tags of what is not a client (a client's is its socket's fd).
  static constexpr int kListenerTag = -1;
  static constexpr int kSignalTag = -2;
  static constexpr int kReloadTag = -3;

  struct Connection {
    UnixSeqpacketSocket socket;
    ClientOutbox outbox;  // what its socket did not take yet (client_outbox.hpp)
    bool broken = false;  // a send failed: the core drops it after this event
    bool polled = false;  // in the epoll set (a refused connection never is)
  };

  // Start (daemon_io_start.cpp).
  std::expected<void, std::string> open_signals();
  // Throws when another user's object holds a name this daemon needs; logs
  // the others, which stay where they are.
  void refuse_foreign_objects();
  // Takes over a previous ferryd's pool and heartbeat table when nodes it
  // served still live (they reconnect); false when there is nothing to
  // adopt (the caller then starts clean).
  bool adopt_live_state();
  void start_clean();
  std::expected<void, std::string> open_epoll();
  [[nodiscard]] PoolFacts pool_facts();
  // Whose objects this daemon trusts: its uid, its configured mode at most.
  [[nodiscard]] transport::ObjectOwner object_owner() const;
  void shutdown();

  // Carries out the core's effects in order, then has the core drop the
  // connections whose sockets failed (which may break others: repeated).
  void apply(const Effects& effects);
  void carry_out(const SendMessage& send);
  void carry_out(const CloseConnection& close);
  void carry_out(const ReclaimSlot& reclaim);
  // `attached_fd` >= 0 travels with the message (see UnixSeqpacketSocket::send).
  void send(ConnectionId id, Connection& connection, std::uint32_t request_id,
            const Message& message, int attached_fd);
  // EPOLLOUT: sends what the connection's outbox holds, as far as it goes.
  void flush_outbox(ConnectionId id, Connection& connection);
  // Polls the socket for EPOLLOUT too while its outbox is not empty.
  void watch_writable(Connection& connection, bool writable);
  void serve(ConnectionId id, Connection& connection);
  // A send failed: logged, and the connection marked for drop_broken().
  void broken(ConnectionId id, Connection& connection, const SocketError& error);
  // Has the core drop every broken connection; dropping one notifies its
  // peers, which may break another: repeated until none is left.
  void drop_broken();

  // Accepting (daemon_limits.cpp).
  void accept_clients();
  // EMFILE/ENFILE: the listener is left alone for a short back-off instead
  // of being polled (level-triggered) in a busy loop.
  void pause_accepting(const std::string& why);
  void resume_accepting_when_due();

  // SIGHUP: re-reads the YAML (daemon_reload.cpp) on a thread of its own,
  // so that the loop goes on serving while a large file is parsed; the
  // result is given to the core on the loop when the thread says it is done.
  void reload();
  void finish_reload();

  DaemonOptions options_;
  config::Config config_;  // as loaded at start: the pool is planned from it
  UnixSeqpacketSocket listener_;
  ShmObjects shm_;
  // Dead nodes: reclaimed exactly, their slots freed once complete
  // (node_reaper.hpp); the core gives a slot again only after that.
  NodeReaper reaper_;
  DaemonCore core_;
  ServiceNotifier notifier_;        // systemd: readiness, reload, stop, watchdog
  std::optional<DomainPool> pool_;  // made after the stale objects are gone
  std::optional<transport::Segment> heartbeat_segment_;  // "ferry.<domain>.registry"
  HeartbeatTable beats_;
  std::map<ConnectionId, Connection> connections_;  // by socket fd
  bool accepting_ = true;                           // false during an EMFILE back-off
  std::uint64_t resume_accepting_at_ = 0;
  std::unique_ptr<ReloadJob> reload_job_;
  bool reload_again_ = false;  // a SIGHUP came while a reload was reading
  bool domain_removed_ = false;
  int wait_ms_ = 1000;  // run()'s longest wait
  int epoll_fd_ = -1;
  int signal_fd_ = -1;
  int reload_fd_ = -1;  // eventfd: the reading thread is done
};

}  // namespace ferry::discovery
