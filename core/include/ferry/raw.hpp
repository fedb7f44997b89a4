#pragma once
/// @file
/// Untyped ports, for tools that learn a topic's type at run time (the ferry
/// CLI, bridges, recorders). They take the topic's own type: the sample is a
/// byte span of the topic's sample size. Created by Node::raw_publisher /
/// Node::raw_subscriber. Typed code should use Publisher<T> / Subscriber<T>.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "ferry/detail/ports.hpp"
#include "ferry/publish_result.hpp"
#include "ferry/sample_info.hpp"

namespace ferry {

/// A taken sample's bytes, valid until this handle is destroyed. Move-only.
class RawSample {
 public:
  /// Move-only: the moved-from handle holds nothing.
  ///@{
  RawSample(RawSample&& other) noexcept
      : held_(std::exchange(other.held_, nullptr)), token_(other.token_), bytes_(other.bytes_) {}
  RawSample& operator=(RawSample&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, nullptr);
      token_ = other.token_;
      bytes_ = other.bytes_;
    }
    return *this;
  }
  RawSample(const RawSample&) = delete;
  RawSample& operator=(const RawSample&) = delete;
  ///@}
  /// Releases the sample.
  ~RawSample() { reset(); }

  /// The sample's bytes, read-only.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  /// The first byte.
  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }
  /// How many bytes.
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
  /// As Sample<T>::info(): sequence, publisher and publish time.
  [[nodiscard]] SampleInfo info() const noexcept { return held_->sample_info(token_); }

 private:
  friend class RawSubscriber;
  RawSample(detail::HeldSamples* held, std::uint32_t token,
            std::span<const std::byte> bytes) noexcept
      : held_(held), token_(token), bytes_(bytes) {}
  FERRY_HOT void reset() noexcept {
    if (held_ != nullptr) detail::release_held(std::exchange(held_, nullptr), token_);
  }

  detail::HeldSamples* held_;
  std::uint32_t token_;
  std::span<const std::byte> bytes_;
};

/// A pool chunk loaned by a RawPublisher: write up to capacity() bytes at
/// data(), then RawPublisher::publish(std::move(loan), size). Move-only;
/// destroying an unpublished loan returns its chunk. Use it on the publisher's
/// thread, while the publisher lives.
class RawLoan {
 public:
  /// Move-only: the moved-from loan holds nothing.
  ///@{
  RawLoan(RawLoan&& other) noexcept
      : port_(std::exchange(other.port_, nullptr)), chunk_(other.chunk_) {}
  RawLoan& operator=(RawLoan&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::exchange(other.port_, nullptr);
      chunk_ = other.chunk_;
    }
    return *this;
  }
  RawLoan(const RawLoan&) = delete;
  RawLoan& operator=(const RawLoan&) = delete;
  ///@}
  /// Returns the chunk to the pool unless the loan was published.
  ~RawLoan() { reset(); }

  /// The first byte to write.
  [[nodiscard]] std::byte* data() const noexcept { return chunk_.data; }
  /// How many bytes the chunk can take.
  [[nodiscard]] std::size_t capacity() const noexcept { return chunk_.capacity; }

 private:
  friend class RawPublisher;
  RawLoan(detail::PublisherPort* port, detail::LoanedChunk chunk) noexcept
      : port_(port), chunk_(chunk) {}
  void reset() noexcept {
    if (port_ != nullptr) std::exchange(port_, nullptr)->return_loan(chunk_);
  }

  detail::PublisherPort* port_;
  detail::LoanedChunk chunk_;
};

/// Publishes samples of a topic's own type as bytes (Node::raw_publisher).
/// Move-only; use from one thread at a time.
class RawPublisher {
 public:
  /// Publishes one sample: `sample` must be exactly sample_size() bytes;
  /// anything else is refused (TooLarge, nothing delivered) without touching
  /// the queues.
  FERRY_HOT PublishResult publish(std::span<const std::byte> sample) noexcept {
    if (sample.size() != sample_size_) [[unlikely]] {
      PublishResult refused;
      refused.error = ErrorCode::TooLarge;
      return refused;
    }
    return port_->publish(sample.data(), static_cast<std::uint32_t>(sample.size()));
  }
  /// publish_many for raw ports (Publisher<T>::publish_many): `samples` holds
  /// whole samples of sample_size() bytes, back to back. A bytes topic, or a
  /// length that is not a multiple of the sample size, is refused (TooLarge,
  /// nothing sent); an empty span does nothing.
  PublishResult publish_many(std::span<const std::byte> samples) noexcept {
    if (sample_size_ == 0 || samples.size() % sample_size_ != 0) {
      PublishResult refused;
      refused.error = ErrorCode::TooLarge;
      return refused;
    }
    return port_->publish_many(samples.data(), samples.size() / sample_size_,
                               static_cast<std::uint32_t>(sample_size_));
  }
  /// A chunk for a sample of `size` bytes: the topic's sample size, or up to
  /// max_size() on a bytes topic (TooManyLoans, PoolExhausted, TooLarge).
  std::expected<RawLoan, ErrorCode> loan(std::size_t size) noexcept {
    if (size > (sample_size_ != 0 ? sample_size_ : port_->max_size()))
      return std::unexpected(ErrorCode::TooLarge);
    auto chunk = port_->loan(size);
    if (!chunk) return std::unexpected(chunk.error());
    return RawLoan(port_.get(), *chunk);
  }
  /// Publishes the first `size` bytes of a loan without copying; the loan is
  /// consumed. A size other than the topic's sample size (typed topics) or
  /// over the loan's capacity is refused: the loan goes back, nothing is sent.
  PublishResult publish(RawLoan&& loan, std::size_t size) noexcept {
    RawLoan taken = std::move(loan);
    if (taken.port_ != port_.get() || size > taken.capacity() ||
        (sample_size_ != 0 && size != sample_size_)) {
      PublishResult refused;
      refused.error = ErrorCode::TooLarge;
      return refused;
    }
    taken.port_ = nullptr;
    return port_->publish_loan(taken.chunk_, size);
  }
  /// The topic's sample size in bytes (0 on a bytes topic).
  [[nodiscard]] std::size_t sample_size() const noexcept { return sample_size_; }
  /// Bytes topics: the largest payload.
  [[nodiscard]] std::size_t max_size() const noexcept { return port_->max_size(); }
  /// As Publisher<T>::subscriber_count(): queues attached, reached by the next publish.
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept {
    return port_->subscriber_count();
  }
  /// Waits until at least `count` subscribers are matched (subscriber_count()
  /// >= count; observers are not counted) or `timeout` passed. True when they
  /// are: a publish() after that reaches them. For start-up, before the first
  /// publish; it polls, so keep it off the hot path.
  [[nodiscard]] bool wait_for_subscribers(std::uint32_t count,
                                          std::chrono::nanoseconds timeout) const noexcept {
    return port_->wait_for_subscribers(count, timeout);
  }
  /// Matched observers (SubscriberOptions::observer), not in subscriber_count().
  [[nodiscard]] std::uint32_t observer_count() const noexcept { return port_->observer_count(); }
  /// The SampleInfo::publisher_id of every sample this publisher sends
  /// (e.g. to recognise one's own samples on a topic one also subscribes).
  [[nodiscard]] std::uint64_t publisher_id() const noexcept { return port_->publisher_id(); }
  /// The topic's name.
  [[nodiscard]] const std::string& topic() const noexcept { return port_->topic(); }

 private:
  friend class Node;
  explicit RawPublisher(std::unique_ptr<detail::PublisherPort> port)
      : port_(std::move(port)), sample_size_(port_->sample_size()) {}
  std::unique_ptr<detail::PublisherPort> port_;
  std::size_t sample_size_;  // the topic's, fixed: not asked on every publish
};

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
