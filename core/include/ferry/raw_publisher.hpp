#pragma once
/// @file
/// RawPublisher: publishes a topic's samples as bytes (ferry/raw.hpp).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "ferry/detail/ports.hpp"
#include "ferry/publish_result.hpp"
#include "ferry/raw_loan.hpp"

namespace ferry {

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
  /// `count` samples of sample_size() bytes to write in place, then
  /// publish_many(std::move(batch)): Publisher<T>::loan_many for raw ports.
  /// A bytes topic is refused (TooLarge).
  std::expected<RawLoanBatch, ErrorCode> loan_many(std::size_t count) noexcept {
    if (sample_size_ == 0) return std::unexpected(ErrorCode::TooLarge);
    auto batch = port_->loan_many(count, static_cast<std::uint32_t>(sample_size_));
    if (!batch) return std::unexpected(batch.error());
    return RawLoanBatch(port_.get(), *batch);
  }
  /// Publishes a loaned batch, as Publisher<T>::publish_many(LoanBatch&&).
  /// Another publisher's batch or a moved-from one is refused (InvalidArgument).
  PublishResult publish_many(RawLoanBatch&& batch) noexcept {
    return std::move(batch).publish_on(port_.get());
  }
  /// The most samples one loan_many() can take (Publisher<T>::loan_many_capacity).
  [[nodiscard]] std::size_t loan_many_capacity() const noexcept {
    return port_->loan_many_capacity();
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

}  // namespace ferry
