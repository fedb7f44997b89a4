#pragma once
/// @file
/// Publisher<T>: publishes samples of T on one topic.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <expected>
#include <memory>
#include <span>
#include <string>

#include "ferry/bytes.hpp"
#include "ferry/detail/ports.hpp"
#include "ferry/loan.hpp"
#include "ferry/loan_batch.hpp"
#include "ferry/publish_result.hpp"
#include "ferry/type_name.hpp"

namespace ferry {

/// Publishes samples of T on one topic; made by Node::publisher. Move-only;
/// use from one thread at a time.
template <class T>
class Publisher {
  static_assert(std::is_trivially_copyable_v<T>, "ferry samples must be trivially copyable");

 public:
  /// Copies the sample into every matched subscriber's queue, applying the
  /// topic's full-queue policy (a sample too large for a ring slot is copied
  /// once into a pool chunk that all share). Never allocates or throws.
  FERRY_HOT PublishResult publish(const T& sample) noexcept requires(!std::is_same_v<T, Bytes>) {
    return port_->publish(&sample, static_cast<std::uint32_t>(sizeof(T)));
  }

  /// Publishes every sample of `samples`, in order (docs/batches.md): the
  /// topic's policy applies per sample (block: what fits, then waits for room
  /// for the rest up to block_timeout_ms in total; drop_new: the first that
  /// fit; drop_oldest: the newest `capacity` stay), with one index store and
  /// at most one wake-up per queue and batch; a span larger than the
  /// capacity goes in pieces. Counts are samples x queues. Each sample gets
  /// its own sequence number; publish_time_ns is read once per batch. An
  /// empty span does nothing. Samples too large for a ring slot go one by one
  /// through the pool. Never allocates or throws.
  PublishResult publish_many(std::span<const T> samples) noexcept
      requires(!std::is_same_v<T, Bytes>) {
    return port_->publish_many(samples.data(), samples.size(),
                               static_cast<std::uint32_t>(sizeof(T)));
  }
  /// A sample to write in place in the shared pool, then publish() without a
  /// copy. An exhausted pool or max_loans reached is an error value.
  std::expected<Loan<T>, ErrorCode> loan() noexcept requires(!std::is_same_v<T, Bytes>) {
    auto chunk = port_->loan(sizeof(T));
    if (!chunk) return std::unexpected(chunk.error());
    return Loan<T>(port_.get(), *chunk);
  }
  /// Bytes topics: a loan of `size` bytes (at most the topic's max_size;
  /// more is TooLarge).
  std::expected<Loan<T>, ErrorCode> loan(
      std::size_t size) noexcept requires std::is_same_v<T, Bytes> {
    if (size > port_->max_size()) return std::unexpected(ErrorCode::TooLarge);
    auto chunk = port_->loan(size);
    if (!chunk) return std::unexpected(chunk.error());
    return Loan<T>(port_.get(), *chunk, size);
  }
  /// Publishes a loan without copying it; the loan is consumed. An empty
  /// (moved-from) loan or another publisher's is refused (InvalidArgument,
  /// nothing sent; another publisher's chunk goes back to it).
  PublishResult publish(Loan<T>&& loan) noexcept {
    if (loan.port_ != port_.get()) [[unlikely]] {
      const Loan<T> returned = std::move(loan);
      PublishResult refused;
      refused.error = ErrorCode::InvalidArgument;
      return refused;
    }
    loan.port_ = nullptr;
    if constexpr (std::is_same_v<T, Bytes>) {
      return port_->publish_loan(loan.chunk_, loan.view_.size());
    } else {
      return port_->publish_loan(loan.chunk_, sizeof(T));
    }
  }
  /// `count` samples to write in place, then publish together with
  /// publish_many(std::move(batch)) (docs/batches.md). Samples that fit a
  /// ring slot lie back to back in the publisher's own batch buffer, made
  /// with the publisher (up to the topic's capacity; the batch counts as one
  /// loan toward max_loans) and copied into the slots as publish_many copies
  /// a span; larger ones are one pool chunk each (up to max_loans, each a
  /// loan), never copied. One batch at a time. `count` 0 gives an empty
  /// batch. Error values: TooManyLoans (a batch is out, or max_loans would
  /// be passed), InvalidArgument (count > loan_many_capacity()),
  /// PoolExhausted (then nothing is loaned). Never allocates or throws.
  std::expected<LoanBatch<T>, ErrorCode> loan_many(std::size_t count) noexcept
      requires(!std::is_same_v<T, Bytes>) {
    auto batch = port_->loan_many(count, static_cast<std::uint32_t>(sizeof(T)));
    if (!batch) return std::unexpected(batch.error());
    return LoanBatch<T>(RawLoanBatch(port_.get(), *batch));
  }
  /// Publishes a loaned batch as publish_many(span) publishes its samples
  /// (in order, the policy per sample, counts samples x queues); the batch
  /// is consumed. Another publisher's batch, or a moved-from one, is refused
  /// (InvalidArgument, nothing sent; the batch goes back to its publisher).
  PublishResult publish_many(LoanBatch<T>&& batch) noexcept requires(!std::is_same_v<T, Bytes>) {
    return std::move(batch.raw_).publish_on(port_.get());
  }
  /// The most samples one loan_many() can take: the topic's capacity when a
  /// T fits a ring slot, else its max_loans.
  [[nodiscard]] std::size_t loan_many_capacity() const noexcept
      requires(!std::is_same_v<T, Bytes>) {
    return port_->loan_many_capacity();
  }
  /// Bytes topics: copies `bytes` into a loan and publishes it.
  PublishResult publish(
      std::span<const std::byte> bytes) noexcept requires std::is_same_v<T, Bytes> {
    auto l = loan(bytes.size());
    if (!l) return PublishResult{0, port_->subscriber_count(), 0, 0, l.error()};
    if (!bytes.empty()) std::memcpy(l->get()->data(), bytes.data(), bytes.size());
    return publish(std::move(*l));
  }
  /// Subscribers whose queues this publisher has attached: a publish()
  /// after this returned N reaches (or waits for, or drops at) those N.
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept {
    return port_->subscriber_count();
  }
  /// Waits until at least `count` subscribers are matched (subscriber_count()
  /// >= count; observers are not counted) or `timeout` passed. True when they
  /// are: a publish() after that reaches them. The subscriber's side may
  /// learn of the match a moment later: the sample waits in its queue, but a
  /// take() made at once can still find nothing (Subscriber::publisher_count()
  /// says when it can). For start-up, before the first publish; it polls, so
  /// keep it off the hot path.
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
  explicit Publisher(std::unique_ptr<detail::PublisherPort> port) : port_(std::move(port)) {}
  std::unique_ptr<detail::PublisherPort> port_;
};

}  // namespace ferry
