#pragma once
/// @file
/// Node: a participant in a domain, and the options it and its subscribers take.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/bytes.hpp"
#include "ferry/publisher.hpp"
#include "ferry/raw.hpp"
#include "ferry/service.hpp"
#include "ferry/subscriber.hpp"
#include "ferry/type_name.hpp"

namespace ferry {

namespace detail {
class NodeRuntime;
struct TypeInfo {
  std::string_view name;
  std::size_t size;
  std::size_t align;
  std::string_view layout = {};  // FERRY_TYPE_LAYOUT's fingerprint; empty: not generated
};
}  // namespace detail

/// How a Node joins its domain.
struct NodeOptions {
  /// The domain; empty: $FERRY_DOMAIN, else "default".
  std::string domain;
  /// How long to wait for ferryd to answer a request.
  std::chrono::milliseconds request_timeout{5000};
  /// How many times a subscriber's take(timeout) polls its queues before it
  /// sleeps (each poll a few ns plus a cpu_relax); 0 sleeps at once, which
  /// costs a wake-up (microseconds) per sample but no CPU while waiting.
  std::uint32_t take_spin = detail::kDefaultTakeSpin;
};

/// How a subscriber joins its topic.
struct SubscriberOptions {
  /// An observer inspects a topic without changing how it runs (the ferry
  /// CLI's echo, hz and bw use one). Its queues overwrite their oldest sample
  /// when full, whatever the topic's policy, so a publisher never waits or
  /// times out for it; it does not count toward max_subscribers, nor in a
  /// publisher's PublishResult or subscriber_count(); what it missed is its
  /// queues' `overwritten` count (`ferry topic info`). It may miss samples:
  /// use it to watch, not to process.
  bool observer = false;
};

/// A participant in a domain: one connection to ferryd and the ports created
/// through it. Several nodes may live in one process. Construction throws
/// ferry::Error when ferryd cannot be reached (naming the socket and how to
/// start it).
class Node {
 public:
  /// Joins the domain as `name` (shown by `ferry node list`).
  explicit Node(std::string name, NodeOptions options = {});
  /// Releases this handle on the node.
  ~Node();
  /// Move-only.
  ///@{
  Node(Node&&) noexcept;
  Node& operator=(Node&&) noexcept;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ///@}

  /// A publisher of T on `topic`. Throws ferry::Error when the topic refuses
  /// the port (type mismatch, max_publishers reached, undeclared topic under
  /// strict: ...).
  template <NamedSample T>
  Publisher<T> publisher(std::string_view topic) {
    return Publisher<T>(make_publisher(topic, type_info<T>()));
  }
  /// A subscriber of T on `topic` (an observer with options.observer).
  /// Throws ferry::Error as publisher() does.
  template <NamedSample T>
  Subscriber<T> subscriber(std::string_view topic, const SubscriberOptions& options = {}) {
    return Subscriber<T>(make_subscriber(topic, type_info<T>(), options));
  }

  /// Untyped ports that take the topic's own type (for tools; see raw.hpp).
  /// Throw ferry::Error when the topic has no type yet or refuses the port.
  ///@{
  RawPublisher raw_publisher(std::string_view topic) {
    return RawPublisher(make_publisher(topic, detail::TypeInfo{"", 0, 0}));
  }
  RawSubscriber raw_subscriber(std::string_view topic, const SubscriberOptions& options = {}) {
    return RawSubscriber(make_subscriber(topic, detail::TypeInfo{"", 0, 0}, options));
  }
  ///@}
  /// Untyped ports of a type named at run time (the C API, core/c): checked
  /// against the topic as publisher<T>() and subscriber<T>() check a T of
  /// this name, size and alignment. Throw ferry::Error as those do.
  ///@{
  RawPublisher raw_publisher(std::string_view topic, std::string_view type_name, std::size_t size,
                             std::size_t alignment) {
    return RawPublisher(make_publisher(topic, detail::TypeInfo{type_name, size, alignment}));
  }
  RawSubscriber raw_subscriber(std::string_view topic, std::string_view type_name, std::size_t size,
                               std::size_t alignment, const SubscriberOptions& options = {}) {
    return RawSubscriber(
        make_subscriber(topic, detail::TypeInfo{type_name, size, alignment}, options));
  }
  ///@}

  /// The server of `service` (docs/services.md), taking Req and answering
  /// Resp. Throws ferry::Error when the service refuses it: it has a server
  /// already (the sentence names its node), the types differ from the
  /// service's, an undeclared service under strict.
  template <NamedSample Req, NamedSample Resp>
  Server<Req, Resp> server(std::string_view service) {
    return Server<Req, Resp>(make_server(service, type_info<Req>(), type_info<Resp>()));
  }
  /// A client of `service`. Throws ferry::Error as server() does
  /// (max_clients reached, types, strict).
  template <NamedSample Req, NamedSample Resp>
  Client<Req, Resp> client(std::string_view service) {
    return Client<Req, Resp>(make_client(service, type_info<Req>(), type_info<Resp>()));
  }
  /// Untyped service ports of the service's own types (for tools: `ferry
  /// service call`); the core is used bytewise.
  ///@{
  std::unique_ptr<detail::ClientCore> raw_client(std::string_view service) {
    return make_client(service, detail::TypeInfo{"", 0, 0}, detail::TypeInfo{"", 0, 0});
  }
  std::unique_ptr<detail::ServerCore> raw_server(std::string_view service) {
    return make_server(service, detail::TypeInfo{"", 0, 0}, detail::TypeInfo{"", 0, 0});
  }
  ///@}

  /// The node's name.
  [[nodiscard]] const std::string& name() const noexcept;
  /// The domain it joined.
  [[nodiscard]] const std::string& domain() const noexcept;
  /// Empty while the node is alive; after ferryd declared it dead (it
  /// missed its heartbeats, e.g. while stopped), the daemon's sentence, e.g.
  /// "this node was declared dead after 1043 ms without a heartbeat ...".
  /// Its ports then return ErrorCode::NodeDeclaredDead; creating a port
  /// joins the domain again.
  [[nodiscard]] std::string declared_dead() const;
  /// Whether the node is connected to ferryd now. While it is not (ferryd
  /// stopped or crashed), established flows go on, new ports wait, and the
  /// node reconnects by itself when a ferryd serves the domain again.
  [[nodiscard]] bool connected() const;

 private:
  template <class T>
  static detail::TypeInfo type_info() {
    if constexpr (std::is_same_v<T, Bytes>) {
      return {TypeName<T>::value, 0, 1};  // variable size: the topic's max_size bounds it
    } else if constexpr (HasTypeLayout<T>) {
      return {TypeName<T>::value, sizeof(T), alignof(T), TypeLayout<T>::value};
    } else {
      return {TypeName<T>::value, sizeof(T), alignof(T)};
    }
  }
  std::unique_ptr<detail::PublisherPort> make_publisher(std::string_view topic,
                                                        const detail::TypeInfo& type);
  std::unique_ptr<detail::SubscriberPort> make_subscriber(std::string_view topic,
                                                          const detail::TypeInfo& type,
                                                          const SubscriberOptions& options);

  std::unique_ptr<detail::ServerCore> make_server(std::string_view service,
                                                  const detail::TypeInfo& request,
                                                  const detail::TypeInfo& response);
  std::unique_ptr<detail::ClientCore> make_client(std::string_view service,
                                                  const detail::TypeInfo& request,
                                                  const detail::TypeInfo& response);

  std::shared_ptr<detail::NodeRuntime> runtime_;
  std::uint32_t take_spin_ =
      detail::kDefaultTakeSpin;  // NodeOptions::take_spin, for new subscribers
};

}  // namespace ferry
