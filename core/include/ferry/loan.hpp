#pragma once
/// @file
/// Loan<T>: a sample written in place in the domain's shared pool, published
/// without a copy. Move-only; destroying an unpublished loan returns its chunk.
/// Use it on the publisher's thread.

#include <cstddef>
#include <utility>

#include "ferry/bytes.hpp"
#include "ferry/detail/ports.hpp"

namespace ferry {

template <class Req, class Resp>
class Request;

template <class T>
class Publisher;

/// A pool chunk a Publisher<T> loaned, to write a T in place and then
/// publish without a copy (Publisher::publish(Loan&&)). Move-only; destroying
/// an unpublished loan returns its chunk. Use it on the publisher's thread.
template <class T>
class Loan {
 public:
  /// Move-only: the moved-from loan holds nothing.
  ///@{
  Loan(Loan&& other) noexcept : port_(std::exchange(other.port_, nullptr)), chunk_(other.chunk_) {}
  Loan& operator=(Loan&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::exchange(other.port_, nullptr);
      chunk_ = other.chunk_;
    }
    return *this;
  }
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  ///@}
  /// Returns the chunk to the pool unless the loan was published.
  ~Loan() { reset(); }

  /// The sample to write, in the chunk. The chunk holds a T's bytes (what it
  /// held before), not a constructed T: T is trivially copyable, so write
  /// its fields (or assign a whole T) before publishing.
  ///@{
  [[nodiscard]] T& operator*() const noexcept { return *get(); }
  [[nodiscard]] T* operator->() const noexcept { return get(); }
  [[nodiscard]] T* get() const noexcept { return reinterpret_cast<T*>(chunk_.data); }
  ///@}

 private:
  friend class Publisher<T>;
  template <class, class>
  friend class Request;  // services: a response written in place
  Loan(detail::PublisherPort* port, detail::LoanedChunk chunk) noexcept
      : port_(port), chunk_(chunk) {}
  void reset() noexcept {
    if (port_ != nullptr) std::exchange(port_, nullptr)->return_loan(chunk_);
  }

  detail::PublisherPort* port_;
  detail::LoanedChunk chunk_;
};

/// A loan on a bytes topic: `size()` bytes to fill at `data()`.
template <>
class Loan<Bytes> {
 public:
  /// Move-only: the moved-from loan holds nothing.
  ///@{
  Loan(Loan&& other) noexcept
      : port_(std::exchange(other.port_, nullptr)), chunk_(other.chunk_), view_(other.view_) {}
  Loan& operator=(Loan&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::exchange(other.port_, nullptr);
      chunk_ = other.chunk_;
      view_ = other.view_;
    }
    return *this;
  }
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  ///@}
  /// Returns the chunk to the pool unless the loan was published.
  ~Loan() { reset(); }

  /// The bytes to fill: ->data(), ->size().
  ///@{
  [[nodiscard]] const MutableBytes& operator*() const noexcept { return view_; }
  [[nodiscard]] const MutableBytes* operator->() const noexcept { return &view_; }
  [[nodiscard]] const MutableBytes* get() const noexcept { return &view_; }
  ///@}

 private:
  friend class Publisher<Bytes>;
  Loan(detail::PublisherPort* port, detail::LoanedChunk chunk, std::size_t size) noexcept
      : port_(port), chunk_(chunk), view_(std::span<std::byte>(chunk.data, size)) {}
  void reset() noexcept {
    if (port_ != nullptr) std::exchange(port_, nullptr)->return_loan(chunk_);
  }

  detail::PublisherPort* port_;
  detail::LoanedChunk chunk_;
  MutableBytes view_;
};

}  // namespace ferry
