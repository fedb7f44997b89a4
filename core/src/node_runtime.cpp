#include "node_runtime.hpp"

#include <sys/socket.h>

#include <array>
#include <cstdlib>
#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "ferry/discovery/paths.hpp"
#include "ferry/discovery/protocol.hpp"
#include "ferry/error.hpp"
#include "domain_pool_view.hpp"
#include "port_state.hpp"

namespace ferry::detail {

namespace {
constexpr std::chrono::milliseconds kPollInterval{100};
}

std::shared_ptr<NodeRuntime> NodeRuntime::start(std::string name, const NodeOptions& options) {
  std::optional<std::string_view> cli_domain;
  if (!options.domain.empty()) cli_domain = options.domain;
  auto domain = discovery::resolve_domain(cli_domain, std::nullopt);
  if (!domain) throw Error(domain.error().message);
  auto client = discovery::Client::connect(*domain, name, options.request_timeout);
  if (!client) throw Error(client.error());
  std::shared_ptr<DomainPoolView> pool;
  try {
    pool = DomainPoolView::open(*domain, static_cast<transport::OwnerId>(client->welcome().heartbeat_slot));
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
  std::shared_ptr<NodeRuntime> runtime(new NodeRuntime(std::move(name), *domain, std::move(*client),
                                                       options.request_timeout, std::move(pool)));
  runtime->thread_ = std::thread([raw = runtime.get()] { raw->serve(); });
  return runtime;
}

NodeRuntime::NodeRuntime(std::string name, std::string domain, discovery::Client client,
                         std::chrono::milliseconds request_timeout,
                         std::shared_ptr<DomainPoolView> pool)
    : name_(std::move(name)),
      domain_(std::move(domain)),
      request_timeout_(request_timeout),
      client_(std::move(client)),
      pool_(std::move(pool)) {}

NodeRuntime::~NodeRuntime() {
  stopping_.store(true, std::memory_order_relaxed);  // SYNC: relaxed; join() orders the rest
  // Wakes the serving thread's recv at once (the descriptor stays valid
  // until the socket object dies, after the join).
  ::shutdown(client_.socket().fd(), SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  // Closing the socket tells ferryd at once that every port of ours is gone.
}

std::shared_ptr<PublisherState> NodeRuntime::create_publisher(std::string_view topic,
                                                              const TypeInfo& type) {
  return std::static_pointer_cast<PublisherState>(request_port(true, topic, type));
}

std::shared_ptr<SubscriberState> NodeRuntime::create_subscriber(std::string_view topic,
                                                                const TypeInfo& type) {
  return std::static_pointer_cast<SubscriberState>(request_port(false, topic, type));
}

std::shared_ptr<PortState> NodeRuntime::request_port(bool publisher, std::string_view topic,
                                                     const TypeInfo& type) {
  discovery::PortRequest request;
  request.topic = std::string(topic);
  request.type_name = std::string(type.name);
  request.type_size = type.size;
  request.type_align = static_cast<std::uint32_t>(type.align);
  discovery::Message message;
  if (publisher) {
    message = discovery::CreatePublisher{request};
  } else {
    message = discovery::CreateSubscriber{request};
  }

  std::uint32_t id = 0;
  {
    // The pending entry must exist before the reply can arrive.
    std::lock_guard send_lock(send_mutex_);
    std::lock_guard lock(mutex_);
    if (!connected_) {
      throw Error(fmt::format("cannot create a {} on '{}': the connection to ferryd of domain '{}' "
                              "is lost",
                              publisher ? "publisher" : "subscriber", topic, domain_));
    }
    auto sent = client_.send(message);
    if (!sent) throw Error(sent.error());
    id = *sent;
    pending_[id] = PendingPort{publisher, std::string(topic)};
  }

  std::unique_lock lock(mutex_);
  const bool answered = replied_.wait_for(lock, request_timeout_, [&] {
    return replies_.contains(id) || !connected_;
  });
  auto node = replies_.extract(id);
  pending_.erase(id);
  if (!answered || node.empty()) {
    throw Error(fmt::format("ferryd of domain '{}' did not answer the {} request for '{}' within "
                            "{} ms",
                            domain_, publisher ? "publisher" : "subscriber", topic,
                            request_timeout_.count()));
  }
  Reply& reply = node.mapped();
  if (reply.port) return reply.port;
  if (reply.message) {
    if (const auto* error = std::get_if<discovery::Error>(&*reply.message)) {
      throw Error(error->message);
    }
  }
  throw Error(reply.failure.empty() ? fmt::format("unexpected reply to the port request for '{}'",
                                                  topic)
                                    : reply.failure);
}

void NodeRuntime::destroy_port(std::uint64_t port_id) noexcept {
  {
    std::lock_guard lock(mutex_);
    ports_.erase(port_id);
  }
  std::lock_guard send_lock(send_mutex_);
  (void)client_.send(discovery::DestroyPort{port_id});
}

void NodeRuntime::serve() {
  std::array<std::byte, discovery::kMaxMessageSize> buffer;
  // SYNC: relaxed; the destructor joins this thread afterwards.
  while (!stopping_.load(std::memory_order_relaxed)) {
    auto received = client_.socket().recv(buffer, kPollInterval);
    if (!received) {
      if (received.error().code == discovery::SocketErrorCode::timeout) continue;
      // Our own destructor's shutdown() woke us: not a lost daemon.
      // SYNC: relaxed, as above.
      if (stopping_.load(std::memory_order_relaxed)) return;
      // The daemon is gone. Established flows keep going without it; new
      // ports cannot be made until a daemon is back.
      spdlog::warn("node '{}': lost the connection to ferryd of domain '{}': {}", name_, domain_,
                   received.error().message);
      std::lock_guard lock(mutex_);
      connected_ = false;
      replied_.notify_all();
      return;
    }
    auto envelope = discovery::decode(std::span<const std::byte>(buffer.data(), *received));
    if (!envelope) {
      spdlog::error("node '{}': malformed message from ferryd: {}", name_, envelope.error().message);
      continue;
    }
    on_message(envelope->request_id, std::move(envelope->message));
  }
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
    (void)client_.send(discovery::QueueReleased{unmatched->port_id, unmatched->peer_port_id});
    return;
  }
  if (request_id == 0) {
    if (const auto* error = std::get_if<discovery::Error>(&message)) {
      spdlog::error("node '{}': ferryd says: {}", name_, error->message);
    }
    return;
  }
  std::lock_guard lock(mutex_);
  replies_[request_id].message = std::move(message);
  replied_.notify_all();
}

void NodeRuntime::on_port_created(std::uint32_t request_id, const discovery::PortCreated& created) {
  std::optional<PendingPort> pending;
  {
    std::lock_guard lock(mutex_);
    if (auto it = pending_.find(request_id); it != pending_.end()) pending = it->second;
  }
  Reply reply;
  if (pending) {
    try {
      // Built here, on the serving thread, so that the Matched notifications
      // that follow this reply find the port.
      if (pending->publisher) {
        reply.port = std::make_shared<PublisherState>(domain_, pending->topic, created, pool_);
      } else {
        reply.port = std::make_shared<SubscriberState>(domain_, pending->topic, created, pool_);
      }
    } catch (const std::exception& e) {
      reply.failure = e.what();
    }
  }
  if (!reply.port) {
    // Nobody waits for it any more, or it could not be set up: give it back.
    std::lock_guard send_lock(send_mutex_);
    (void)client_.send(discovery::DestroyPort{created.port_id});
  }
  if (!pending) return;
  std::lock_guard lock(mutex_);
  if (reply.port) ports_[created.port_id] = reply.port;
  replies_[request_id] = std::move(reply);
  replied_.notify_all();
}

}  // namespace ferry::detail
