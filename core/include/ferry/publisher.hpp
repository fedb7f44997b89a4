#pragma once
#include <memory>
#include <string>

#include "ferry/detail/ports.hpp"
#include "ferry/publish_result.hpp"
#include "ferry/type_name.hpp"

namespace ferry {

// Publishes samples of T on one topic. Move-only; use from one thread at a time.
template <class T>
class Publisher {
  static_assert(std::is_trivially_copyable_v<T>, "ferry samples must be trivially copyable");

 public:
  // Copies the sample into every matched subscriber's queue, applying the
  // topic's full-queue policy. Never allocates or throws.
  PublishResult publish(const T& sample) noexcept {
    return port_->publish(&sample, static_cast<std::uint32_t>(sizeof(T)));
  }
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept { return port_->subscriber_count(); }
  [[nodiscard]] const std::string& topic() const noexcept { return port_->topic(); }

 private:
  friend class Node;
  explicit Publisher(std::unique_ptr<detail::PublisherPort> port) : port_(std::move(port)) {}
  std::unique_ptr<detail::PublisherPort> port_;
};

}  // namespace ferry
