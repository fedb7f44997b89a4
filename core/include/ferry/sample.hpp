#pragma once
/// @file
/// Sample<T>: a sample a subscriber took, held until the handle is destroyed.
#include <cstdint>
#include <utility>

#include "ferry/bytes.hpp"
#include "ferry/detail/ports.hpp"
#include "ferry/sample_info.hpp"

namespace ferry {

template <class Req, class Resp>
class Pending;

/// A sample taken by a subscriber: valid, and never rewritten, until this
/// handle is destroyed, which releases it (from any thread). Move-only.
template <class T>
class Sample {
 public:
  /// Move-only: the moved-from handle holds nothing (destroying it does nothing).
  ///@{
  Sample(Sample&& other) noexcept
      : held_(std::exchange(other.held_, nullptr)), token_(other.token_), value_(other.value_) {}
  Sample& operator=(Sample&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, nullptr);
      token_ = other.token_;
      value_ = other.value_;
    }
    return *this;
  }
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  ///@}
  /// Releases the sample (its queue slot or pool chunk goes back).
  ~Sample() { reset(); }

  /// The sample, read-only (in the ring slot's copy or in the pool chunk).
  ///@{
  [[nodiscard]] const T& operator*() const noexcept { return *value_; }
  [[nodiscard]] const T* operator->() const noexcept { return value_; }
  [[nodiscard]] const T* get() const noexcept { return value_; }
  ///@}
  /// Sequence, publisher and publish time (docs/cpp-api.md); valid while this
  /// handle holds the sample (not on a moved-from handle).
  [[nodiscard]] SampleInfo info() const noexcept { return held_->sample_info(token_); }

 private:
  template <class>
  friend class Subscriber;
  template <class, class>
  friend class Pending;  // services: a call's response
  Sample(detail::HeldSamples* held, std::uint32_t token, const T* value) noexcept
      : held_(held), token_(token), value_(value) {}
  void reset() noexcept {
    if (held_ != nullptr) detail::release_held(std::exchange(held_, nullptr), token_);
  }

  detail::HeldSamples* held_;
  std::uint32_t token_;
  const T* value_;
};

/// A sample of a bytes topic: ->data(), ->size().
template <>
class Sample<Bytes> {
 public:
  /// Move-only: the moved-from handle holds nothing (destroying it does nothing).
  ///@{
  Sample(Sample&& other) noexcept
      : held_(std::exchange(other.held_, nullptr)), token_(other.token_), value_(other.value_) {}
  Sample& operator=(Sample&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, nullptr);
      token_ = other.token_;
      value_ = other.value_;
    }
    return *this;
  }
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  ///@}
  /// Releases the sample (its queue slot or pool chunk goes back).
  ~Sample() { reset(); }

  /// The sample's bytes, read-only.
  ///@{
  [[nodiscard]] const Bytes& operator*() const noexcept { return value_; }
  [[nodiscard]] const Bytes* operator->() const noexcept { return &value_; }
  [[nodiscard]] const Bytes* get() const noexcept { return &value_; }
  ///@}
  /// As Sample<T>::info().
  [[nodiscard]] SampleInfo info() const noexcept { return held_->sample_info(token_); }

 private:
  template <class>
  friend class Subscriber;
  Sample(detail::HeldSamples* held, std::uint32_t token, Bytes value) noexcept
      : held_(held), token_(token), value_(value) {}
  void reset() noexcept {
    if (held_ != nullptr) detail::release_held(std::exchange(held_, nullptr), token_);
  }

  detail::HeldSamples* held_;
  std::uint32_t token_;
  Bytes value_;
};

}  // namespace ferry
