#pragma once
/// @file
/// Subscriber<T>: takes samples of T from one topic.
#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "ferry/detail/ports.hpp"
#include "ferry/error.hpp"
#include "ferry/sample.hpp"
#include "ferry/type_name.hpp"

namespace ferry {

class WaitSet;

/// Takes samples of T from one topic, fairly from all matched publishers and
/// in each publisher's order; made by Node::subscriber. Move-only; use from
/// one thread at a time.
template <class T>
class Subscriber {
  static_assert(std::is_trivially_copyable_v<T>, "ferry samples must be trivially copyable");

 public:
  /// Never blocks. Empty when nothing is queued, or when a sample is queued
  /// but max_held samples are still held (try_take tells the two apart).
  FERRY_HOT std::optional<Sample<T>> take() noexcept {
    return take(std::chrono::nanoseconds::zero());
  }
  /// Waits up to `timeout` for a sample: spins briefly (set_take_spin),
  /// then sleeps.
  FERRY_HOT std::optional<Sample<T>> take(std::chrono::nanoseconds timeout) noexcept {
    detail::TakenSample taken;
    ErrorCode error{};
    if (port_->take(taken, error, timeout) != detail::TakeStatus::Taken) return std::nullopt;
    return make_sample(taken);
  }
  /// Like take(), but says why nothing came back when it is an error:
  /// TooManyHeld (a sample is queued but max_held samples are still held),
  /// NodeDeclaredDead, ... An empty optional means nothing is queued.
  FERRY_HOT std::expected<std::optional<Sample<T>>, ErrorCode> try_take(
      std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept {
    detail::TakenSample taken;
    ErrorCode error{};
    switch (port_->take(taken, error, timeout)) {
      case detail::TakeStatus::Taken:
        return std::optional<Sample<T>>(make_sample(taken));
      case detail::TakeStatus::Failed:
        return std::unexpected(error);
      case detail::TakeStatus::Empty:
        break;
    }
    return std::optional<Sample<T>>();
  }

  /// Copies up to out.size() queued samples into `out`, fairly from the
  /// publishers and in each one's order, with one index store per queue;
  /// never blocks. Returns how many it copied (0: nothing is queued), or
  /// why it could not take (NodeDeclaredDead, InheritedNode), as try_take().
  /// It holds no sample, so max_held does not limit it; SampleInfo is not
  /// kept (take() gives it).
  std::expected<std::size_t, ErrorCode> take_many(std::span<T> out) noexcept
      requires(!std::is_same_v<T, Bytes>) {
    return take_many(out, std::chrono::nanoseconds::zero());
  }
  /// As take_many(out), but waits up to `timeout` for the first sample (only
  /// for the first: then it takes what is there and returns).
  std::expected<std::size_t, ErrorCode> take_many(std::span<T> out,
                                                  std::chrono::nanoseconds timeout) noexcept
      requires(!std::is_same_v<T, Bytes>) {
    return port_->take_many(out.data(), out.size(), static_cast<std::uint32_t>(sizeof(T)), timeout);
  }

  /// Publishers ferryd matched with this subscriber. Each attaches the queue
  /// on its side a moment later: a sample it publishes meanwhile does not
  /// come here. The publisher's subscriber_count() tells when it has.
  [[nodiscard]] std::uint32_t publisher_count() const noexcept { return port_->publisher_count(); }
  /// The topic's name.
  [[nodiscard]] const std::string& topic() const noexcept { return port_->topic(); }
  /// How many times take(timeout) polls before it sleeps (default
  /// NodeOptions::take_spin); 0 sleeps at once.
  void set_take_spin(std::uint32_t polls) noexcept { port_->set_take_spin(polls); }

 private:
  friend class Node;
  friend class WaitSet;
  explicit Subscriber(std::unique_ptr<detail::SubscriberPort> port) : port_(std::move(port)) {}
  FERRY_HOT Sample<T> make_sample(const detail::TakenSample& taken) const noexcept {
    if constexpr (std::is_same_v<T, Bytes>) {
      return Sample<T>(port_->held(), taken.token,
                       Bytes(std::span(static_cast<const std::byte*>(taken.data), taken.size)));
    } else {
      return Sample<T>(port_->held(), taken.token, static_cast<const T*>(taken.data));
    }
  }
  std::unique_ptr<detail::SubscriberPort> port_;
};

}  // namespace ferry
