#pragma once
// The ferryd wire format: one SOCK_SEQPACKET datagram is one message.
//
//   offset  size  field
//        0     4  magic         kMagic ("FRRY" in byte order)
//        4     2  version       kProtocolVersion
//        6     2  type          MessageType
//        8     4  body length   == datagram length - kHeaderSize
//       12     4  request id    0 for notifications
//       16     -  body
//
// All integers little-endian, written byte by byte (no struct is copied to
// the wire). Strings: u16 length + bytes, no NUL, a per-field limit
// (limits.hpp). Lists: u16 count + entries. bool: one byte, 0 or 1. Enums:
// their underlying width, range-checked. The magic and version stay at these
// offsets in every future version, so a peer speaking another version gets
// a clear "version" error rather than garbage.
//
// Decoding never trusts its input (it comes from another process): every
// length, count, enum and string is checked, and a body must be consumed
// exactly. Encoding enforces the same rules, so what one side encodes the
// other side decodes.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "ferry/discovery/limits.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::discovery {

inline constexpr std::uint32_t kMagic = 0x59525246;  // bytes 'F' 'R' 'R' 'Y'
// 2: resuming after a daemon restart; 3: a topic's ports and queues paged;
// 4: a port's type layout fingerprint (PortRequest::type_layout);
// 5: observer subscribers (PortRequest, Matched and PortInfo carry the flag).
inline constexpr std::uint16_t kProtocolVersion = 5;
inline constexpr std::size_t kHeaderSize = 16;

// A decoded datagram.
struct Envelope {
  std::uint32_t request_id = 0;
  Message message;
  bool operator==(const Envelope&) const = default;
};

enum class DecodeErrorCode : std::uint8_t {
  TruncatedHeader,     // shorter than kHeaderSize
  Oversized,           // longer than kMaxMessageSize
  BadMagic,            // not a ferry message
  UnsupportedVersion,  // another protocol version
  LengthMismatch,      // header's body length != datagram length - header
  UnknownType,         // a message type this side does not know
  TruncatedBody,       // the body ends inside a field
  StringTooLong,       // a string field over its limit
  InvalidString,       // a string with a NUL byte
  InvalidEnum,         // an enum or bool out of range
  InvalidValue,        // another field rule (pid <= 0, capacity not a power of two...)
  TrailingBytes,       // bytes left after the last field
};

struct DecodeError {
  DecodeErrorCode code;
  std::string message;  // one sentence naming the field and the rule
};

enum class EncodeErrorCode : std::uint8_t {
  StringTooLong,   // a string field over its limit
  InvalidString,   // a string with a NUL byte
  TooManyEntries,  // a list longer than a u16 count allows
  InvalidValue,    // a field rule the decoder would refuse
  TooLarge,        // the message exceeds kMaxMessageSize
  BufferTooSmall,  // encode_into: the caller's buffer is too small
};

struct EncodeError {
  EncodeErrorCode code;
  std::string message;
};

// The bytes of one datagram carrying `message`.
[[nodiscard]] std::expected<std::vector<std::byte>, EncodeError> encode(const Message& message,
                                                                        std::uint32_t request_id);

// Encodes into `out` without allocating; returns the datagram length.
[[nodiscard]] std::expected<std::size_t, EncodeError> encode_into(const Message& message,
                                                                  std::uint32_t request_id,
                                                                  std::span<std::byte> out);

// The datagram length `message` would encode to (header included); lets the
// daemon fill a TopicList page up to kMaxMessageSize.
[[nodiscard]] std::expected<std::size_t, EncodeError> encoded_size(const Message& message);

// Decodes one whole datagram.
[[nodiscard]] std::expected<Envelope, DecodeError> decode(std::span<const std::byte> datagram);

}  // namespace ferry::discovery
