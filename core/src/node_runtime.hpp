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

#include "ferry/discovery/client.hpp"
#include "ferry/discovery/messages.hpp"
#include "ferry/node.hpp"

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
  std::shared_ptr<SubscriberState> create_subscriber(std::string_view topic, const TypeInfo& type);
  // Tells ferryd the port is gone; does not wait for the answer.
  void destroy_port(std::uint64_t port_id) noexcept;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& domain() const noexcept { return domain_; }

 private:
  NodeRuntime(std::string name, std::string domain, discovery::Client client,
              std::chrono::milliseconds request_timeout, std::shared_ptr<DomainPoolView> pool);

  struct PendingPort {
    bool publisher = false;
    std::string topic;
  };
  // Sends a port request; the serving thread builds the port state when the
  // reply arrives (before any Matched for it is read) and hands it back.
  std::shared_ptr<PortState> request_port(bool publisher, std::string_view topic,
                                          const TypeInfo& type);
  void serve();
  void on_message(std::uint32_t request_id, discovery::Message message);
  void on_port_created(std::uint32_t request_id, const discovery::PortCreated& created);

  const std::string name_;
  const std::string domain_;
  const std::chrono::milliseconds request_timeout_;
  discovery::Client client_;
  std::shared_ptr<DomainPoolView> pool_;
  std::mutex send_mutex_;  // guards client_.send (ids and the socket's write side)

  std::mutex mutex_;  // guards everything below
  std::condition_variable replied_;
  std::map<std::uint32_t, PendingPort> pending_;  // request id -> what was asked
  struct Reply {
    std::optional<discovery::Message> message;
    std::shared_ptr<PortState> port;
    std::string failure;
  };
  std::map<std::uint32_t, Reply> replies_;
  std::map<std::uint64_t, std::weak_ptr<PortState>> ports_;
  bool connected_ = true;

  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ferry::detail
