#pragma once
// Internal: the two sides of the wire format. WireWriter and WireReader offer
// the same field operations, so each message's field list is written once
// (codec.cpp) and drives both encoding and decoding. Both enforce the same
// rules; an error is sticky and later operations do nothing.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ferry/discovery/limits.hpp"
#include "ferry/discovery/messages.hpp"
#include "ferry/discovery/protocol.hpp"

namespace ferry::discovery::wire {

// Highest valid wire value of each enum (all of them start at 0 or 1 and are
// contiguous).
template <class E>
struct EnumRange;
template <>
struct EnumRange<Policy> {
  static constexpr std::uint64_t min = 0, max = 2;
};
template <>
struct EnumRange<UnmatchReason> {
  static constexpr std::uint64_t min = 0, max = 2;
};
template <>
struct EnumRange<RefusalCode> {
  static constexpr std::uint64_t min = 1, max = 13;
};

template <class E>
concept WireEnum = std::is_enum_v<E> && requires {
  EnumRange<E>::max;
};

// Strings must fit their field's limit and hold no NUL byte (they end up
// in C APIs such as shm_open).
enum class StringProblem : std::uint8_t { None, TooLong, HasNul };
[[nodiscard]] StringProblem check_string(std::string_view value, std::size_t limit) noexcept;
[[nodiscard]] std::string string_message(StringProblem problem, std::string_view value,
                                         std::string_view field, std::size_t limit);

class WireWriter {
 public:
  // Writes into `out` while it has room and keeps counting past it, so that
  // one pass both encodes and measures. An empty span only measures.
  explicit WireWriter(std::span<std::byte> out) noexcept : out_(out) {}

  template <std::unsigned_integral T>
  void num(const T& value, std::string_view /*field*/) {
    put(static_cast<std::uint64_t>(value), sizeof(T));
  }

  void pid(const std::int32_t& value, std::string_view field);

  template <WireEnum E>
  void enumeration(const E& value, std::string_view field) {
    using U = std::underlying_type_t<E>;
    const auto raw = static_cast<std::uint64_t>(static_cast<U>(value));
    if (raw < EnumRange<E>::min || raw > EnumRange<E>::max) {
      fail(EncodeErrorCode::InvalidValue,
           enum_message(field, raw, EnumRange<E>::min, EnumRange<E>::max));
      return;
    }
    put(raw, sizeof(U));
  }

  void str(const std::string& value, std::string_view field, std::size_t limit);

  // A bool: one byte, 0 or 1.
  void flag(const bool& value, std::string_view /*field*/) { put(value ? 1 : 0, 1); }

  template <class T, class Each>
  void list(const std::vector<T>& items, std::string_view field, Each&& each) {
    if (items.size() > kMaxListEntries) {
      fail(EncodeErrorCode::TooManyEntries, too_many_message(field, items.size()));
      return;
    }
    put(items.size(), 2);
    for (const T& item : items) {
      if (error_) return;
      each(*this, item);
    }
  }

  // A field rule; `message` is built only when it fails.
  template <class MakeMessage>
  void require(bool ok, MakeMessage&& message) {
    if (!ok && !error_) fail(EncodeErrorCode::InvalidValue, message());
  }

  void put(std::uint64_t value, std::size_t bytes) noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return pos_; }
  [[nodiscard]] bool fits() const noexcept { return pos_ <= out_.size(); }
  [[nodiscard]] const std::optional<EncodeError>& error() const noexcept { return error_; }

  static std::string enum_message(std::string_view field, std::uint64_t raw, std::uint64_t min,
                                  std::uint64_t max);
  static std::string too_many_message(std::string_view field, std::size_t count);

 private:
  void fail(EncodeErrorCode code, std::string message) {
    if (!error_) error_ = EncodeError{code, std::move(message)};
  }

  std::span<std::byte> out_;
  std::size_t pos_ = 0;
  std::optional<EncodeError> error_;
};

class WireReader {
 public:
  WireReader(std::span<const std::byte> in, std::string_view message_name) noexcept
      : in_(in), message_name_(message_name) {}

  template <std::unsigned_integral T>
  void num(T& value, std::string_view field) {
    std::uint64_t raw = 0;
    if (take(raw, sizeof(T), field)) value = static_cast<T>(raw);
  }

  void pid(std::int32_t& value, std::string_view field);

  template <WireEnum E>
  void enumeration(E& value, std::string_view field) {
    using U = std::underlying_type_t<E>;
    std::uint64_t raw = 0;
    if (!take(raw, sizeof(U), field)) return;
    if (raw < EnumRange<E>::min || raw > EnumRange<E>::max) {
      fail(DecodeErrorCode::InvalidEnum,
           WireWriter::enum_message(field, raw, EnumRange<E>::min, EnumRange<E>::max));
      return;
    }
    value = static_cast<E>(static_cast<U>(raw));
  }

  void str(std::string& value, std::string_view field, std::size_t limit);

  // A bool: one byte, 0 or 1 (anything else is refused).
  void flag(bool& value, std::string_view field) {
    std::uint64_t raw = 0;
    if (!take(raw, 1, field)) return;
    if (raw > 1) {
      fail(DecodeErrorCode::InvalidEnum, WireWriter::enum_message(field, raw, 0, 1));
      return;
    }
    value = raw == 1;
  }

  template <class T, class Each>
  void list(std::vector<T>& items, std::string_view field, Each&& each) {
    std::uint64_t count = 0;
    if (!take(count, 2, field)) return;
    // No reserve(count): every entry consumes bytes, so the datagram's own
    // length bounds the growth, whatever the count claims.
    for (std::uint64_t i = 0; i < count && !error_; ++i) {
      each(*this, items.emplace_back());
    }
  }

  template <class MakeMessage>
  void require(bool ok, MakeMessage&& message) {
    if (!ok && !error_) fail(DecodeErrorCode::InvalidValue, message());
  }

  [[nodiscard]] std::size_t remaining() const noexcept { return in_.size() - pos_; }
  [[nodiscard]] const std::optional<DecodeError>& error() const noexcept { return error_; }
  void fail(DecodeErrorCode code, std::string message) {
    if (!error_) error_ = DecodeError{code, std::move(message)};
  }

 private:
  bool take(std::uint64_t& value, std::size_t bytes, std::string_view field);

  std::span<const std::byte> in_;
  std::string_view message_name_;
  std::size_t pos_ = 0;
  std::optional<DecodeError> error_;
};

}  // namespace ferry::discovery::wire
