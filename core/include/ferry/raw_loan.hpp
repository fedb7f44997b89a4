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

}  // namespace ferry
