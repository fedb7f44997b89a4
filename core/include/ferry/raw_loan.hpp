#pragma once
/// @file
/// RawLoan: a pool chunk loaned by a RawPublisher (ferry/raw.hpp).

#include <cstddef>
#include <utility>

#include "ferry/detail/ports.hpp"

namespace ferry {

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

/// A batch of loans made by RawPublisher::loan_many (and, typed, inside
/// Publisher<T>::loan_many's LoanBatch<T>, ferry/loan_batch.hpp): size() samples of sample_size()
/// bytes each, to write at sample(i), then RawPublisher::publish_many(std::move(batch)). Move-only;
/// destroying an unpublished batch gives it back. Use it on the publisher's thread, while the
/// publisher lives.
class RawLoanBatch {
 public:
  /// Move-only: the moved-from batch holds nothing.
  ///@{
  RawLoanBatch(RawLoanBatch&& other) noexcept
      : port_(std::exchange(other.port_, nullptr)), batch_(std::exchange(other.batch_, {})) {}
  RawLoanBatch& operator=(RawLoanBatch&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::exchange(other.port_, nullptr);
      batch_ = std::exchange(other.batch_, {});
    }
    return *this;
  }
  RawLoanBatch(const RawLoanBatch&) = delete;
  RawLoanBatch& operator=(const RawLoanBatch&) = delete;
  ///@}
  /// Gives the batch back unless it was published.
  ~RawLoanBatch() { reset(); }
  /// How many samples the batch holds (0 once published or moved from).
  [[nodiscard]] std::size_t size() const noexcept { return batch_.count; }
  /// Each sample's bytes.
  [[nodiscard]] std::size_t sample_size() const noexcept { return batch_.size; }
  /// Keeps the first `count` samples; the others go back (LoanBatch::shrink).
  void shrink(std::size_t count) noexcept {
    if (port_ != nullptr) port_->shrink_loan_many(batch_, count);
  }
  /// Sample `i` (< size()): sample_size() bytes to write.
  [[nodiscard]] std::byte* sample(std::size_t i) const noexcept { return batch_.sample(i); }
  /// size() x sample_size() bytes, the samples back to back, when they fit a
  /// ring slot; else null (pooled samples: use sample(i)).
  [[nodiscard]] std::byte* data() const noexcept {
    return batch_.kind == detail::LoanedBatch::Kind::Inline ? batch_.data : nullptr;
  }

 private:
  friend class RawPublisher;
  template <class>
  friend class Publisher;
  RawLoanBatch(detail::PublisherPort* port, detail::LoanedBatch batch) noexcept
      : port_(port), batch_(batch) {}
  void reset() noexcept {
    if (port_ != nullptr) std::exchange(port_, nullptr)->return_loan_many(batch_);
    batch_ = {};
  }
  // Publishes the batch on `port`, consuming it; a batch of another port,
  // or a moved-from one, is refused (InvalidArgument, nothing sent) and
  // goes back to its own publisher.
  PublishResult publish_on(detail::PublisherPort* port) && noexcept {
    if (port_ != port) [[unlikely]] {
      reset();
      PublishResult refused;
      refused.error = ErrorCode::InvalidArgument;
      return refused;
    }
    port_ = nullptr;
    return port->publish_loan_many(batch_);
  }
  detail::PublisherPort* port_;
  detail::LoanedBatch batch_;
};

}  // namespace ferry
