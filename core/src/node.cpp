#include "ferry/node.hpp"

#include "node_runtime.hpp"
#include "publisher_state.hpp"
#include "subscriber_state.hpp"

namespace ferry {

Node::Node(std::string name, NodeOptions options)
    : runtime_(detail::NodeRuntime::start(std::move(name), options)),
      take_spin_(options.take_spin) {}

Node::~Node() = default;
Node::Node(Node&&) noexcept = default;
Node& Node::operator=(Node&&) noexcept = default;

const std::string& Node::name() const noexcept { return runtime_->name(); }
const std::string& Node::domain() const noexcept { return runtime_->domain(); }
std::string Node::declared_dead() const { return runtime_->declared_dead(); }
bool Node::connected() const { return runtime_->connected(); }

std::unique_ptr<detail::PublisherPort> Node::make_publisher(std::string_view topic,
                                                            const detail::TypeInfo& type) {
  return std::make_unique<detail::PublisherPort>(runtime_, runtime_->create_publisher(topic, type));
}

std::unique_ptr<detail::SubscriberPort> Node::make_subscriber(std::string_view topic,
                                                              const detail::TypeInfo& type,
                                                              const SubscriberOptions& options) {
  auto port = std::make_unique<detail::SubscriberPort>(
      runtime_, runtime_->create_subscriber(topic, type, options.observer));
  port->set_take_spin(take_spin_);
  return port;
}

}  // namespace ferry
