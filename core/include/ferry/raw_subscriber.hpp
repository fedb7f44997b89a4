#pragma once
/// @file
/// RawSubscriber: takes a topic's samples as bytes (ferry/raw.hpp).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "ferry/detail/ports.hpp"
#include "ferry/error.hpp"
#include "ferry/raw_sample.hpp"

namespace ferry {

class WaitSet;

/// Takes samples of a topic's own type as bytes (Node::raw_subscriber).
/// Move-only; use from one thread at a time.
class RawSubscriber {
 public:
  /// Waits up to `timeout` (zero: never waits). Empty when nothing came.
  FERRY_HOT std::optional<RawSample> take(
      std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept {
    detail::TakenSample taken;
    ErrorCode error{};
    if (port_->take(taken, error, timeout) != detail::TakeStatus::Taken) return std::nullopt;
    return make_sample(taken);
  }
  /// Like take(), but says why nothing came back when it is an error
  /// (Subscriber<T>::try_take): TooManyHeld, NodeDeclaredDead,
  /// InheritedNode, ... An empty optional means nothing is queued.
  FERRY_HOT std::expected<std::optional<RawSample>, ErrorCode> try_take(
      std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept {
    detail::TakenSample taken;
    ErrorCode error{};
    switch (port_->take(taken, error, timeout)) {
      case detail::TakeStatus::Taken:
        return std::optional<RawSample>(make_sample(taken));
      case detail::TakeStatus::Failed:
        return std::unexpected(error);
      case detail::TakeStatus::Empty:
        break;
    }
    return std::optional<RawSample>();
  }
  /// take_many for raw ports (Subscriber<T>::take_many): copies whole
  /// samples of sample_size() bytes into `out`, as many as fit; waits up to
  /// `timeout` for the first only. Returns how many samples, or an error as
  /// Subscriber<T>::take_many (InvalidArgument on a bytes topic).
  std::expected<std::size_t, ErrorCode> take_many(
      std::span<std::byte> out,
      std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept {
    const std::size_t size = port_->sample_size();
    if (size == 0) return std::unexpected(ErrorCode::InvalidArgument);
    return port_->take_many(out.data(), out.size() / size, static_cast<std::uint32_t>(size),
                            timeout);
  }
  /// The topic's sample size in bytes (0 on a bytes topic).
  [[nodiscard]] std::size_t sample_size() const noexcept { return port_->sample_size(); }
  /// As Subscriber<T>::publisher_count().
  [[nodiscard]] std::uint32_t publisher_count() const noexcept { return port_->publisher_count(); }
  /// The topic's name.
  [[nodiscard]] const std::string& topic() const noexcept { return port_->topic(); }
  /// As Subscriber<T>::set_take_spin(): how many times take(timeout)
  /// polls before it sleeps; 0 sleeps at once.
  void set_take_spin(std::uint32_t polls) noexcept { port_->set_take_spin(polls); }

 private:
  friend class Node;
  friend class WaitSet;
  explicit RawSubscriber(std::unique_ptr<detail::SubscriberPort> port) : port_(std::move(port)) {}
  FERRY_HOT RawSample make_sample(const detail::TakenSample& taken) const noexcept {
    return RawSample(
        port_->held(), taken.token,
        std::span<const std::byte>(static_cast<const std::byte*>(taken.data), taken.size));
  }
  std::unique_ptr<detail::SubscriberPort> port_;
};

}  // namespace ferry
