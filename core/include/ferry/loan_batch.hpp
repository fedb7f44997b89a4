#pragma once
/// @file
/// LoanBatch<T>: many samples written in place and published at once
/// (Publisher::loan_many, docs/batches.md). Move-only; destroying an
/// unpublished batch gives its memory back. Use it on the publisher's thread.

#include <cstddef>
#include <iterator>
#include <utility>

#include "ferry/raw_loan.hpp"

namespace ferry {

template <class T>
class Publisher;

/// `size()` samples of T loaned by Publisher<T>::loan_many, to write in
/// place and then publish with Publisher::publish_many(std::move(batch)).
/// Samples that fit a ring slot lie back to back in the publisher's own
/// batch buffer (data() is then a T[size()]); larger ones are one pool
/// chunk each. A sample holds whatever bytes it held before: write every
/// field. Move-only; destroying an unpublished batch gives it back.
template <class T>
class LoanBatch {
 public:
  /// Move-only (the moved-from batch holds nothing); destroying an
  /// unpublished batch gives it back.
  ///@{
  LoanBatch(LoanBatch&&) noexcept = default;
  LoanBatch& operator=(LoanBatch&&) noexcept = default;
  ///@}

  /// How many samples the batch holds (0 once published or moved from),
  /// and whether that is none.
  ///@{
  [[nodiscard]] std::size_t size() const noexcept { return raw_.size(); }
  [[nodiscard]] bool empty() const noexcept { return raw_.size() == 0; }
  ///@}
  /// Keeps the first `count` samples and gives the others back (a pooled
  /// batch's chunks return to the pool): for a batch loaned at its largest
  /// and filled with what there was. A count of size() or more keeps all.
  void shrink(std::size_t count) noexcept { raw_.shrink(count); }
  /// Sample `i` (< size()), to write.
  [[nodiscard]] T& operator[](std::size_t i) const noexcept {
    return *reinterpret_cast<T*>(raw_.sample(i));
  }
  /// The samples as one array when they are back to back (samples that fit
  /// a ring slot), else null (pooled samples: use operator[]).
  [[nodiscard]] T* data() const noexcept { return reinterpret_cast<T*>(raw_.data()); }

  /// Iterates over the samples: `for (Pose& p : batch)`.
  class iterator {
   public:
    /// A forward iterator's traits.
    ///@{
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&;
    ///@}
    /// An iterator of no batch.
    iterator() = default;
    /// The sample it is at.
    ///@{
    reference operator*() const noexcept { return (*batch_)[i_]; }
    pointer operator->() const noexcept { return &(*batch_)[i_]; }
    ///@}
    /// To the next sample.
    ///@{
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++i_;
      return before;
    }
    ///@}
    /// Whether two iterators of one batch are at the same sample.
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }

   private:
    friend class LoanBatch;
    iterator(const LoanBatch* batch, std::size_t i) noexcept : batch_(batch), i_(i) {}
    const LoanBatch* batch_ = nullptr;
    std::size_t i_ = 0;
  };
  /// The first sample, and one past the last.
  ///@{
  [[nodiscard]] iterator begin() const noexcept { return iterator(this, 0); }
  [[nodiscard]] iterator end() const noexcept { return iterator(this, size()); }
  ///@}

 private:
  friend class Publisher<T>;
  explicit LoanBatch(RawLoanBatch raw) noexcept : raw_(std::move(raw)) {}

  RawLoanBatch raw_;  // the untyped batch: ownership, shrink, publish
};

}  // namespace ferry
