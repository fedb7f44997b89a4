#include "node_runtime.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <thread>
#include <vector>

#include "domain_pool_view.hpp"
#include "ferry/detail/publish_clock_calibration.hpp"
#include "ferry/discovery/node_lock.hpp"
#include "ferry/discovery/objects.hpp"
#include "ferry/discovery/paths.hpp"
#include "ferry/discovery/protocol.hpp"
#include "ferry/error.hpp"
#include "fork_guard.hpp"
#include "log_gate.hpp"
#include "publisher_state.hpp"
#include "subscriber_state.hpp"

namespace ferry::detail {

namespace {
constexpr std::chrono::milliseconds kPollInterval{100};

// When our ports see the sentence before ferryd's own words arrive.
std::string dead_sentence(std::uint32_t timeout_ms) {
  return fmt::format(
      "this node was declared dead by ferryd after more than {} ms without a "
      "heartbeat",
      timeout_ms);
}
}  // namespace

NodeRuntime::Session NodeRuntime::open_session(const std::string& name, const std::string& domain,
                                               std::chrono::milliseconds request_timeout) {
  auto client = discovery::Client::connect(domain, name, request_timeout);
  if (!client) throw Error(client.error());
  const discovery::Welcome welcome = client->welcome();
  // The domain's objects must be ferryd's: its uid, as the kernel saw it on
  // the socket; no mode wider than group access (--group).
  auto daemon_cred = client->socket().peer_credentials();
  if (!daemon_cred) throw Error(daemon_cred.error().message);
  const transport::ObjectOwner daemon_owner{daemon_cred->uid, 0660};
  Session session{std::move(*client), nullptr, {}, nullptr};
  try {
    session.pool = DomainPoolView::open(domain, static_cast<transport::NodeSlot>(welcome.node_slot),
                                        daemon_owner);
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
  // Before anything is allocated as this owner: from now on ferryd (and our
  // peers) can tell our process's end from the lock, in any pid namespace.
  // ferryd takes it and sends it with the Welcome; a ferryd that could not
  // leaves it to us (we may lack write access to the runtime directory).
  if (auto sent = session.client.take_welcome_lock(); sent.held()) {
    session.pool->lock = std::move(sent);
  } else {
    if (!session.client.welcome_lock_error().empty()) {
      log_line(spdlog::level::warn, "node '{}': {}", name, session.client.welcome_lock_error());
    }
    if (auto lock =
            discovery::NodeLock::take(domain, welcome.node_slot, discovery::runtime_dir())) {
      session.pool->lock = std::move(*lock);
    } else {
      log_line(spdlog::level::warn,
               "node '{}': {}; ferryd will judge this node's liveness by its pid", name,
               lock.error());
    }
  }
  if (!welcome.registry_shm.empty()) {
    auto beats = transport::Segment::open(
        welcome.registry_shm, discovery::kRegistryKind, discovery::kRegistryLayoutVersion,
        discovery::kOpenTimeout, transport::SegmentAccess::ReadWrite, daemon_owner);
    if (!beats && beats.error() == transport::SegmentError::Untrusted) {
      throw Error(transport::untrusted_name(welcome.registry_shm, daemon_owner)
                      .value_or("/dev/shm/" + welcome.registry_shm + " is not ferryd's"));
    }
    if (!beats) {
      throw Error(fmt::format("cannot open the heartbeat table '{}' of domain '{}': {}",
                              welcome.registry_shm, domain, transport::to_string(beats.error())));
    }
    const auto table = discovery::HeartbeatTable::in(beats->payload(), beats->payload_size());
    session.beats = table;
    session.beat_slot = table.slot(welcome.node_slot);
    if (session.beat_slot == nullptr) {
      throw Error(fmt::format("ferryd gave node '{}' heartbeat slot {}, outside its table", name,
                              welcome.node_slot));
    }
    static_assert(static_cast<std::uint32_t>(discovery::SlotState::DeclaredDead) ==
                  kNodeDeclaredDead);
    // The mapping moves with the Segment object; the memory stays put.
    session.pool->node_state = &session.beat_slot->state;
    session.pool->beats_segment.emplace(std::move(*beats));
  }
  return session;
}

std::shared_ptr<NodeRuntime> NodeRuntime::start(std::string name, const NodeOptions& options) {
  std::optional<std::string_view> cli_domain;
  if (!options.domain.empty()) cli_domain = options.domain;
  auto domain = discovery::resolve_domain(cli_domain, std::nullopt);
  if (!domain) throw Error(domain.error().message);
  // spdlog's registry, built by its first use: here, before any runtime
  // thread exists, so that threads logging for the first time at once do
  // not race on it (TSan saw two runtime threads do so).
  (void)spdlog::default_logger_raw();
  (void)log_gate();  // and the fork handlers that keep our log lines out of a child
  Session session = open_session(name, *domain, options.request_timeout);
  std::shared_ptr<NodeRuntime> runtime(
      new NodeRuntime(std::move(name), *domain, options.request_timeout, std::move(session)));
  runtime->thread_ = std::thread([raw = runtime.get()] { raw->serve(); });
  return runtime;
}

NodeRuntime::NodeRuntime(std::string name, std::string domain,
                         std::chrono::milliseconds request_timeout, Session session)
    : name_(std::move(name)),
      domain_(std::move(domain)),
      request_timeout_(request_timeout),
      pid_(::getpid()),
      fork_generation_(fork_generation()),
      session_(std::move(session)) {}

bool NodeRuntime::inherited() const noexcept { return fork_generation() != fork_generation_; }

void NodeRuntime::refuse_if_inherited(std::string_view what) const {
  if (!inherited()) return;
  throw Error(fmt::format(
      "cannot {} with node '{}': it belongs to process {}, from which this process was forked; "
      "a forked child cannot use its parent's nodes, create a new ferry::Node in the child",
      what, name_, pid_));
}

NodeRuntime::~NodeRuntime() {
  if (inherited()) {
    // A forked child's copy: the socket is the parent's connection (a
    // shutdown() would cut it for the parent too) and the runtime thread
    // does not exist here, so there is nothing to stop or join. The thread
    // object is kept, reachable, for good: destroying it unjoined would
    // terminate the child, and detaching a thread of the parent is not ours
    // to do. Closing our descriptor of the socket (with session_) is.
    static auto* kept = new std::vector<std::thread>;
    kept->push_back(std::move(thread_));
    return;
  }
  stopping_.store(true, std::memory_order_relaxed);  // SYNC: relaxed; join() orders the rest
  {
    // Wakes the runtime thread's recv at once (the descriptor stays valid
    // until the socket object dies, after the join). Under the send lock:
    // a reconnecting runtime thread replaces the client under it.
    std::lock_guard send_lock(send_mutex_);
    ::shutdown(session_.client.socket().fd(), SHUT_RDWR);
  }
  if (thread_.joinable()) thread_.join();
  // Closing the socket tells ferryd at once that every port of ours is gone.
}

std::string NodeRuntime::declared_dead() const {
  if (inherited()) {
    return fmt::format(
        "node '{}' belongs to process {}, from which this process was forked; a forked child "
        "cannot use its parent's nodes",
        name_, pid_);
  }
  std::lock_guard lock(mutex_);
  if (dead_reason_.empty() && session_.pool->declared_dead()) {
    // Our ports saw the sentence before the runtime thread read ferryd's words.
    return dead_sentence(session_.client.welcome().timeout_ms);
  }
  return dead_reason_;
}

void NodeRuntime::rejoin() {
  std::lock_guard rejoin_lock(rejoin_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (dead_reason_.empty() && !session_.pool->declared_dead()) return;  // rejoined already
  }
  // The runtime thread ends once the connection is lost; wake it in case it
  // has not noticed our death sentence yet (it reads the reason first).
  {
    std::lock_guard send_lock(send_mutex_);
    ::shutdown(session_.client.socket().fd(), SHUT_RDWR);
  }
  if (thread_.joinable()) thread_.join();
  Session session = open_session(name_, domain_, request_timeout_);
  {
    std::lock_guard send_lock(send_mutex_);
    std::lock_guard lock(mutex_);
    session_ = std::move(session);
    ++session_number_;
    ports_.clear();             // the old session's ports stay dead
    destroying_bells_.clear();  // ferryd reclaimed the dead node's objects
    pending_.clear();
    replies_.clear();
    resuming_.clear();
    connected_ = true;
    dead_reason_.clear();
    replied_.notify_all();
  }
  log_line(spdlog::level::info, "node '{}' joined domain '{}' again", name_, domain_);
  thread_ = std::thread([this] { serve(); });
}

std::shared_ptr<PublisherState> NodeRuntime::create_publisher(std::string_view topic,
                                                              const TypeInfo& type) {
  return std::static_pointer_cast<PublisherState>(request_port(true, topic, type));
}

std::shared_ptr<SubscriberState> NodeRuntime::create_subscriber(std::string_view topic,
                                                                const TypeInfo& type,
                                                                bool observer) {
  return std::static_pointer_cast<SubscriberState>(request_port(false, topic, type, observer));
}

std::shared_ptr<PortState> NodeRuntime::request_port(bool publisher, std::string_view topic,
                                                     const TypeInfo& type, bool observer) {
  const char* const kind = publisher ? "publisher" : "subscriber";
  refuse_if_inherited(fmt::format("create a {} on '{}'", kind, topic));
  discovery::PortRequest request;
  request.topic = std::string(topic);
  request.type_name = std::string(type.name);
  request.type_size = type.size;
  request.type_align = static_cast<std::uint32_t>(type.align);
  request.type_layout = std::string(type.layout);
  request.observer = observer;
  discovery::Message message;
  if (publisher) {
    message = discovery::CreatePublisher{request};
  } else {
    message = discovery::CreateSubscriber{request};
  }

  // A node declared dead while its request was on the way (it was slow:
  // stopped, starved) joins again and asks once more; a second death in a
  // row is an error naming it.
  for (int attempt = 0;; ++attempt) {
    bool dead = false;
    {
      std::unique_lock lock(mutex_);
      // ferryd went away: the runtime thread is reconnecting; give it time.
      replied_.wait_for(lock, request_timeout_,
                        [&] { return connected_ || !dead_reason_.empty(); });
      dead = !dead_reason_.empty() || session_.pool->declared_dead();
    }
    // Declared dead (or our state was lost with a daemon restart): a new port
    // joins the domain again, with a new identity.
    if (dead) rejoin();
    std::uint32_t id = 0;
    std::uint64_t session = 0;
    {
      // The pending entry must exist before the reply can arrive: it is made
      // first, with the id this send will get (ids are given only under
      // send_mutex_). mutex_ is not held across the send, which may wait up
      // to a second for room in a busy ferryd's socket: the runtime thread
      // takes mutex_ every turn, and it is the thread that beats. (Holding
      // it starved our heartbeat: declared dead after 1064 ms under load.)
      std::lock_guard send_lock(send_mutex_);
      {
        std::lock_guard lock(mutex_);
        session = session_number_;
        if (!connected_) {
          throw Error(
              fmt::format("cannot create a {} on '{}': the connection to ferryd of domain '{}' "
                          "is lost",
                          kind, topic, domain_));
        }
        id = session_.client.next_request_id();
        pending_[id] = PendingPort{publisher, std::string(topic), request};
      }
      auto sent = session_.client.send(message);
      if (!sent || *sent != id) {
        std::lock_guard lock(mutex_);
        pending_.erase(id);
        throw Error(sent ? fmt::format("request {} went out as {}", id, *sent) : sent.error());
      }
    }

    std::unique_lock lock(mutex_);
    // A new connection restarts request ids: a request of the old one is lost.
    const bool answered = replied_.wait_for(lock, request_timeout_, [&] {
      return session_number_ != session || replies_.contains(id) || !connected_;
    });
    auto node = replies_.extract(id);
    pending_.erase(id);
    if (session_number_ != session && node.empty()) {
      throw Error(
          fmt::format("the connection to ferryd of domain '{}' was lost while creating a "
                      "{} on '{}'; try again",
                      domain_, kind, topic));
    }
    if (node.empty()) {
      if (!dead_reason_.empty() || session_.pool->declared_dead()) {
        if (attempt == 0) continue;  // joins again above
        throw Error(fmt::format(
            "node '{}' was declared dead by ferryd while it asked for a {} on '{}' ({}); it was "
            "declared dead again after joining anew: it misses its heartbeats (timeout_ms)",
            name_, kind, topic,
            dead_reason_.empty() ? std::string("its heartbeat slot says so") : dead_reason_));
      }
      if (!connected_) {
        throw Error(
            fmt::format("the connection to ferryd of domain '{}' was lost while creating a "
                        "{} on '{}'; try again",
                        domain_, kind, topic));
      }
      throw Error(
          fmt::format("ferryd of domain '{}' did not answer the {} request for '{}' within {} ms",
                      domain_, kind, topic, request_timeout_.count()));
    }
    (void)answered;
    Reply& reply = node.mapped();
    if (reply.port) return reply.port;
    if (reply.message) {
      if (const auto* error = std::get_if<discovery::Error>(&*reply.message)) {
        throw Error(error->message);
      }
    }
    throw Error(reply.failure.empty()
                    ? fmt::format("unexpected reply to the port request for '{}'", topic)
                    : reply.failure);
  }
}

void NodeRuntime::destroy_port(const PortState& port) noexcept {
  // A forked child's copy of a parent's port: the port is the parent's,
  // and so is the socket.
  if (inherited()) return;
  // A subscriber's doorbell: removed by ferryd when it handles the
  // DestroyPort. If no ferryd does (none runs, or it dies with the message
  // unread), the next one never learns of this port, so this node removes
  // the name (its rings' names go with their publishers, which see the ring
  // left: previous_daemon_queues.hpp).
  std::string bell;
  try {
    bell = port.resume_doorbell();
  } catch (const std::exception&) {
    // No memory for the name: it stays, as `ferry clean` shows.
  }
  std::lock_guard send_lock(send_mutex_);
  bool connected = true;
  std::uint32_t id = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = ports_.find(port.port_id);
    // Not ours in this session (it died with an earlier one): nothing to say.
    if (it == ports_.end() || it->second.lock().get() != &port) return;
    ports_.erase(it);
    connected = connected_;
    // Before the send: the reply may come before send() returns. The id is
    // the one this send gets (ids are given only under send_mutex_).
    if (connected && !bell.empty()) {
      id = session_.client.next_request_id();
      try {
        destroying_bells_[id] = bell;
      } catch (const std::exception&) {
        id = 0;
      }
    }
  }
  if (connected && session_.client.send(discovery::DestroyPort{port.port_id})) return;
  // Not sent (the socket failed: ferryd is gone), or no ferryd at all.
  if (!bell.empty()) transport::Segment::remove(bell);
  if (id != 0) {
    std::lock_guard lock(mutex_);
    destroying_bells_.erase(id);
  }
}

void NodeRuntime::beat(std::uint64_t& last_beat_ms) {
  discovery::HeartbeatSlot* slot = session_.beat_slot;
  if (slot == nullptr) return;
  // SYNC: acquire, pairs with ferryd's release store when it declares us
  // dead (after it reclaimed what we held).
  if (slot->state.load(std::memory_order_acquire) ==
      static_cast<std::uint32_t>(discovery::SlotState::DeclaredDead)) {
    mark_dead(dead_sentence(session_.client.welcome().timeout_ms));
    return;
  }
  const std::uint64_t now = discovery::monotonic_ms();
  if (now - last_beat_ms < session_.client.welcome().heartbeat_ms / 2) return;
  // SYNC: relaxed; ferryd reads it as a number.
  slot->beat_ms.store(now, std::memory_order_relaxed);
  last_beat_ms = now;
  publish_clock_tick();  // keeps publish times' TSC conversion calibrated
}

void NodeRuntime::mark_dead(const std::string& why) {
  std::vector<std::shared_ptr<PortState>> ports;
  {
    std::lock_guard lock(mutex_);
    if (dead_reason_.empty()) dead_reason_ = why;
    connected_ = false;
    for (auto& [id, weak] : ports_) {
      if (auto port = weak.lock()) ports.push_back(std::move(port));
    }
    replied_.notify_all();
  }
  log_line(spdlog::level::err, "node '{}': {}", name_, why);
  for (auto& port : ports) port->mark_dead();
}

void NodeRuntime::serve() {
  std::array<std::byte, discovery::kMaxMessageSize> buffer;
  // Wake at least every heartbeat period to beat.
  const std::chrono::milliseconds poll = std::clamp<std::chrono::milliseconds>(
      std::chrono::milliseconds(session_.client.welcome().heartbeat_ms / 2),
      std::chrono::milliseconds(1), kPollInterval);
  std::uint64_t last_beat_ms = 0;
  // SYNC: relaxed; the destructor joins this thread afterwards.
  while (!stopping_.load(std::memory_order_relaxed)) {
    beat(last_beat_ms);
    {
      std::lock_guard lock(mutex_);
      if (!dead_reason_.empty()) return;  // declared dead: ferryd closes our socket
    }
    // Waiting first, then receiving without a wait: a quiet period (the
    // steady state) is `false` here, not an error whose sentence would be
    // built, and allocated, every poll.
    const auto readable = session_.client.socket().wait_readable(poll);
    if (readable && !*readable) {
      check_old_peers();
      continue;
    }
    auto received = session_.client.socket().recv(buffer);
    if (!received) {
      if (received.error().code == discovery::SocketErrorCode::Timeout) continue;  // spurious
      // Our own destructor's shutdown() woke us: not a lost daemon.
      // SYNC: relaxed, as above.
      if (stopping_.load(std::memory_order_relaxed)) return;
      beat(last_beat_ms);  // a closed socket may be ferryd declaring us dead
      {
        std::lock_guard lock(mutex_);
        if (!dead_reason_.empty()) return;
      }
      // The daemon is gone. Established flows keep going without it; new
      // ports wait until a daemon is back.
      log_line(spdlog::level::warn, "node '{}': lost the connection to ferryd of domain '{}': {}",
               name_, domain_, received.error().message);
      {
        std::lock_guard lock(mutex_);
        connected_ = false;
        replied_.notify_all();
      }
      if (!reconnect(last_beat_ms)) return;
      continue;
    }
    auto envelope = discovery::decode(std::span<const std::byte>(buffer.data(), *received));
    if (!envelope) {
      log_line(spdlog::level::err, "node '{}': malformed message from ferryd: {}", name_,
               envelope.error().message);
      continue;
    }
    on_message(envelope->request_id, std::move(envelope->message));
  }
}

bool NodeRuntime::reconnect(std::uint64_t& last_beat_ms) {
  using namespace std::chrono_literals;
  const transport::NodeSlot owner = session_.pool->owner;
  auto backoff = 20ms;
  auto next_try = std::chrono::steady_clock::now() + backoff;
  // SYNC: relaxed; the destructor joins this thread afterwards.
  while (!stopping_.load(std::memory_order_relaxed)) {
    std::this_thread::sleep_for(10ms);
    beat(last_beat_ms);  // a restarted ferryd that adopted us watches it
    if (std::chrono::steady_clock::now() < next_try) continue;
    auto client = discovery::Client::connect(domain_, name_, 1000ms, owner);
    if (!client) {
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1000ms);
      next_try = std::chrono::steady_clock::now() + backoff;
      continue;
    }
    if (client->welcome().node_slot != owner) {
      // A ferryd that started clean: our pool and queues are not its own.
      mark_dead(
          fmt::format("ferryd of domain '{}' restarted without this node's state; its ports "
                      "are closed, create new ones",
                      domain_));
      return false;
    }
    std::vector<std::shared_ptr<PortState>> ports;
    std::map<std::uint32_t, std::string> unanswered_bells;
    {
      std::lock_guard send_lock(send_mutex_);
      std::lock_guard lock(mutex_);
      session_.client = std::move(*client);
      ++session_number_;  // request ids start again: old requests are void
      pending_.clear();
      replies_.clear();
      resuming_.clear();
      unanswered_bells.swap(destroying_bells_);
      replied_.notify_all();
      for (auto& [id, weak] : ports_) {
        if (auto port = weak.lock()) ports.push_back(std::move(port));
      }
    }
    // The previous ferryd may have died before it handled these ports'
    // DestroyPort; this one never knew them (destroy_port).
    for (const auto& [id, bell] : unanswered_bells) transport::Segment::remove(bell);
    // Every port again, under the same identity: peers match their old
    // queues to the new ones by our ports' first ids (PortState::identity),
    // which stay the same however many daemons come and go.
    for (auto& port : ports) {
      port->mark_queues_old();
      discovery::PortRequest request = port->request;
      request.resume_doorbell = port->resume_doorbell();
      std::lock_guard send_lock(send_mutex_);
      std::lock_guard lock(mutex_);
      request.identity = port->identity;
      discovery::Message message;
      if (request.resume_doorbell.empty()) {
        message = discovery::CreatePublisher{request};
      } else {
        message = discovery::CreateSubscriber{request};
      }
      if (auto sent = session_.client.send(message)) resuming_[*sent] = port;
    }
    {
      std::lock_guard lock(mutex_);
      connected_ = true;
      replied_.notify_all();
    }
    log_line(spdlog::level::info,
             "node '{}' reconnected to ferryd of domain '{}' and re-registered {} port(s)", name_,
             domain_, ports.size());
    return true;
  }
  return false;
}

void NodeRuntime::check_old_peers() {
  const discovery::HeartbeatTable table = session_.beats;
  if (!table) return;
  // A member, cleared after use: it keeps its capacity, so a steady
  // topology polls without allocating.
  std::vector<std::shared_ptr<PortState>>& ports = old_peer_scan_;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, weak] : ports_) {
      if (auto port = weak.lock()) ports.push_back(std::move(port));
    }
  }
  auto alive = [this, table](transport::NodeSlot owner) {
    const discovery::HeartbeatSlot& slot = *table.slot(owner);  // owner ids are < the slot count
    // SYNC: relaxed; ferryd's word: a slot it freed or declared dead is final.
    if (slot.state.load(std::memory_order_relaxed) !=
        static_cast<std::uint32_t>(discovery::SlotState::Alive)) {
      return false;
    }
    // While no ferryd settles it: the peer's node lock, released by the
    // kernel when its process ends, in any pid namespace (never its pid).
    // No lock file (a peer that could not make one): ferryd's word stands.
    const auto lock = discovery::node_lock_path(domain_, owner, discovery::runtime_dir());
    return discovery::probe_node_lock(lock) != discovery::NodeLockState::Free;
  };
  for (auto& port : ports) port->check_old_peers(alive);
  ports.clear();
}

void NodeRuntime::on_message(std::uint32_t request_id, discovery::Message message) {
  if (const auto* created = std::get_if<discovery::PortCreated>(&message)) {
    on_port_created(request_id, *created);
    return;
  }
  if (const auto* matched = std::get_if<discovery::Matched>(&message)) {
    std::shared_ptr<PortState> port;
    {
      std::lock_guard lock(mutex_);
      if (auto it = ports_.find(matched->port_id); it != ports_.end()) port = it->second.lock();
    }
    if (port) port->on_matched(*matched);
    return;
  }
  if (const auto* unmatched = std::get_if<discovery::Unmatched>(&message)) {
    std::shared_ptr<PortState> port;
    {
      std::lock_guard lock(mutex_);
      if (auto it = ports_.find(unmatched->port_id); it != ports_.end()) port = it->second.lock();
    }
    if (port) port->on_unmatched(*unmatched);
    // The Matched for this pair came before and was handled (the ring is
    // mapped, or could not be): ferryd may unlink the ring's name now.
    std::lock_guard send_lock(send_mutex_);
    (void)session_.client.send(
        discovery::QueueReleased{unmatched->port_id, unmatched->peer_port_id});
    return;
  }
  if (request_id == 0) {
    if (const auto* error = std::get_if<discovery::Error>(&message)) {
      if (error->code == discovery::RefusalCode::NodeExpired) {
        mark_dead(error->message);
      } else {
        log_line(spdlog::level::err, "node '{}': ferryd says: {}", name_, error->message);
      }
    }
    return;
  }
  std::lock_guard lock(mutex_);
  destroying_bells_.erase(request_id);  // ferryd handled that DestroyPort
  if (auto r = resuming_.find(request_id); r != resuming_.end()) {
    if (const auto* error = std::get_if<discovery::Error>(&message)) {
      log_line(spdlog::level::err,
               "node '{}': could not re-register a port with the restarted ferryd: {}", name_,
               error->message);
    }
    resuming_.erase(r);
    return;
  }
  // Only a request somebody waits for keeps its reply (DestroyPort's is
  // not awaited).
  if (!pending_.contains(request_id)) return;
  replies_[request_id].message = std::move(message);
  replied_.notify_all();
}

void NodeRuntime::on_port_created(std::uint32_t request_id, const discovery::PortCreated& created) {
  std::optional<PendingPort> pending;
  {
    std::lock_guard lock(mutex_);
    if (auto r = resuming_.find(request_id); r != resuming_.end()) {
      // A port re-registered after a daemon restart: same state, new id.
      auto port = r->second.lock();
      resuming_.erase(r);
      if (port) {
        ports_.erase(port->port_id);
        port->port_id = created.port_id;
        ports_[created.port_id] = port;
        return;
      }
      // Destroyed meanwhile: give the new registration back below.
    } else if (auto it = pending_.find(request_id); it != pending_.end()) {
      pending = it->second;
    }
  }
  Reply reply;
  if (pending) {
    try {
      // Built here, on the runtime thread, so that the Matched notifications
      // that follow this reply find the port.
      if (pending->publisher) {
        reply.port =
            std::make_shared<PublisherState>(domain_, pending->topic, created, session_.pool);
      } else {
        reply.port =
            std::make_shared<SubscriberState>(domain_, pending->topic, created, session_.pool);
      }
      reply.port->request = pending->request;
    } catch (const std::exception& e) {
      reply.failure = e.what();
    }
  }
  if (!reply.port) {
    // Nobody waits for it any more, or it could not be set up: give it back.
    std::lock_guard send_lock(send_mutex_);
    (void)session_.client.send(discovery::DestroyPort{created.port_id});
  }
  if (!pending) return;
  std::lock_guard lock(mutex_);
  if (reply.port) ports_[created.port_id] = reply.port;
  replies_[request_id] = std::move(reply);
  replied_.notify_all();
}

}  // namespace ferry::detail
