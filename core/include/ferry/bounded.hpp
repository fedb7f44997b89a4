#pragma once
/// @file
/// Bounded strings and sequences for samples (docs/messages.md):
/// ferry::String<N> and ferry::Vector<T, N> hold a length and inline storage
/// for at most N elements, so a sample that has them keeps a fixed size and
/// is still written in place in a loan and copied as bytes. They are what
/// the YAML field types `string<=N` and `T[<=N]` become in `ferry gen cpp`.
///
/// Layout (the same in C, in the YAML schema and here): a `uint32_t`
/// length, then the N elements at the element's alignment; the whole is
/// aligned to the larger of 4 and the element's alignment.
///
/// Nothing here truncates silently: assign(), resize() and push_back()
/// return false and leave the value as it was when the result would not fit.
/// A length read from shared memory is not trusted: size() never says more
/// than N, so view() and span() never reach past the storage.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>

namespace ferry {

/// At most N bytes of text (UTF-8 by convention, not checked), with their
/// length. No NUL is stored: view() is the text.
template <std::size_t N>
class String {
  static_assert(N >= 1 && N <= UINT32_MAX, "String<N> holds 1 to 2^32-1 bytes");

 public:
  /// The element type.
  using value_type = char;

  /// An empty string (the storage is left as it is: nothing to clear).
  constexpr String() noexcept : size_(0) {}  // NOLINT: storage stays uninitialised on purpose
  /// From a string literal that fits (checked at compile time).
  template <std::size_t M>
  requires(M - 1 <= N) constexpr String(const char (&text)[M]) noexcept
      : size_(0) {  // NOLINT: implicit on purpose
    for (std::size_t i = 0; i + 1 < M && text[i] != '\0'; ++i) data_[size_++] = text[i];
  }

  /// N: the most it holds.
  [[nodiscard]] static constexpr std::size_t capacity() noexcept { return N; }
  /// The length used (never more than N).
  [[nodiscard]] constexpr std::size_t size() const noexcept {
    return std::min<std::size_t>(size_, N);
  }
  /// Whether the length is 0.
  [[nodiscard]] constexpr bool empty() const noexcept { return size() == 0; }
  /// The text, of size() bytes.
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {data_, size()}; }
  /// The text, of size() bytes.
  constexpr operator std::string_view() const noexcept { return view(); }  // NOLINT
  /// The storage (N elements; the first size() are used).
  [[nodiscard]] constexpr const char* data() const noexcept { return data_; }
  /// The storage (N elements; the first size() are used).
  [[nodiscard]] constexpr char* data() noexcept { return data_; }

  /// Replaces the text; false (and unchanged) when it is longer than N.
  [[nodiscard]] constexpr bool assign(std::string_view text) noexcept {
    if (text.size() > N) return false;
    std::copy(text.begin(), text.end(), data_);
    size_ = static_cast<std::uint32_t>(text.size());
    return true;
  }
  /// Appends one byte; false when the string is full.
  [[nodiscard]] constexpr bool push_back(char c) noexcept {
    if (size() >= N) return false;
    data_[size()] = c;
    size_ = static_cast<std::uint32_t>(size() + 1);
    return true;
  }
  /// Sets the length to n: new bytes are '\0'. False (unchanged) past N.
  [[nodiscard]] constexpr bool resize(std::size_t n, char fill = '\0') noexcept {
    if (n > N) return false;
    for (std::size_t i = size(); i < n; ++i) data_[i] = fill;
    size_ = static_cast<std::uint32_t>(n);
    return true;
  }
  /// Sets the length to 0.
  constexpr void clear() noexcept { size_ = 0; }

  /// Compares the text.
  friend constexpr bool operator==(const String& a, std::string_view b) noexcept {
    return a.view() == b;
  }

 private:
  std::uint32_t size_;
  char data_[N];
};

/// At most N elements of T (a trivially copyable type: a number, a sample
/// type, a String), with their count.
template <class T, std::size_t N>
class Vector {
  static_assert(N >= 1 && N <= UINT32_MAX, "Vector<T, N> holds 1 to 2^32-1 elements");
  static_assert(std::is_trivially_copyable_v<T>, "Vector<T, N> holds trivially copyable T");

 public:
  /// The element type.
  using value_type = T;

  /// An empty sequence (the storage is left as it is: an image's worth of
  /// bytes is not cleared for nothing).
  constexpr Vector() noexcept : size_(0) {}  // NOLINT: storage stays uninitialised on purpose

  /// N: the most it holds.
  [[nodiscard]] static constexpr std::size_t capacity() noexcept { return N; }
  /// The length used (never more than N).
  [[nodiscard]] constexpr std::size_t size() const noexcept {
    return std::min<std::size_t>(size_, N);
  }
  /// Whether the length is 0.
  [[nodiscard]] constexpr bool empty() const noexcept { return size() == 0; }
  /// The elements used.
  [[nodiscard]] constexpr std::span<const T> span() const noexcept { return {data_, size()}; }
  /// The elements used, writable.
  [[nodiscard]] constexpr std::span<T> span() noexcept { return {data_, size()}; }
  /// The storage (N elements; the first size() are used).
  [[nodiscard]] constexpr const T* data() const noexcept { return data_; }
  /// The storage (N elements; the first size() are used).
  [[nodiscard]] constexpr T* data() noexcept { return data_; }
  /// The first element used.
  [[nodiscard]] constexpr const T* begin() const noexcept { return data_; }
  /// Past the last element used.
  [[nodiscard]] constexpr const T* end() const noexcept { return data_ + size(); }
  /// The first element used.
  [[nodiscard]] constexpr T* begin() noexcept { return data_; }
  /// Past the last element used.
  [[nodiscard]] constexpr T* end() noexcept { return data_ + size(); }
  /// Element i, unchecked as std::vector's: i < size().
  [[nodiscard]] constexpr const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// Element i, unchecked as std::vector's: i < size().
  [[nodiscard]] constexpr T& operator[](std::size_t i) noexcept { return data_[i]; }

  /// Replaces the elements; false (and unchanged) when there are more than N.
  [[nodiscard]] constexpr bool assign(std::span<const T> values) noexcept {
    if (values.size() > N) return false;
    std::copy(values.begin(), values.end(), data_);
    size_ = static_cast<std::uint32_t>(values.size());
    return true;
  }
  /// Appends one element; false when the sequence is full.
  [[nodiscard]] constexpr bool push_back(const T& value) noexcept {
    if (size() >= N) return false;
    data_[size()] = value;
    size_ = static_cast<std::uint32_t>(size() + 1);
    return true;
  }
  /// Sets the count to n; new elements are value-initialised (zero), as in
  /// std::vector. False (unchanged) past N.
  [[nodiscard]] constexpr bool resize(std::size_t n) noexcept {
    if (n > N) return false;
    for (std::size_t i = size(); i < n; ++i) data_[i] = T{};
    size_ = static_cast<std::uint32_t>(n);
    return true;
  }
  /// Sets the count to n and leaves new elements as the storage holds them:
  /// for a loan whose elements are all written next (an image's pixels).
  /// False (unchanged) past N.
  [[nodiscard]] constexpr bool resize_for_overwrite(std::size_t n) noexcept {
    if (n > N) return false;
    size_ = static_cast<std::uint32_t>(n);
    return true;
  }
  /// Sets the length to 0.
  constexpr void clear() noexcept { size_ = 0; }

  /// Compares the elements used, byte for byte.
  friend bool operator==(const Vector& a, const Vector& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const T& x, const T& y) { return std::memcmp(&x, &y, sizeof(T)) == 0; });
  }

 private:
  std::uint32_t size_;
  T data_[N];
};

}  // namespace ferry
