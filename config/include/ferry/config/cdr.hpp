#pragma once
// A ferry sample (C layout, with padding) <-> little-endian CDR as ROS 2 and
// DDS write it (docs/record-replay.md): the 4-byte encapsulation header 00 01 00 00,
// then the fields in declaration order, each primitive aligned to its size
// relative to the first byte after the header; fixed arrays and char[N] carry
// no length; string<=N and T[<=N] are ROS 2's string and sequence<T> (a
// uint32 length, only the used elements; a string's length counts the NUL
// written after it); a `bytes` sample is a uint32 length followed by the data.
// Decoding takes untrusted input: every length is checked and a problem is a
// CdrError whose what() is one sentence naming the field and the offset.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "ferry/config/schema.hpp"

namespace ferry::config {

class CdrError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Decoding met a string or sequence longer than its bound (string<=N,
// T[<=N]): well-formed CDR that does not fit the ferry type (the bridge
// counts it too_large, apart from CDR that does not decode).
class CdrTooLong : public CdrError {
 public:
  using CdrError::CdrError;
};

inline constexpr std::size_t kCdrHeaderSize = 4;

// Size of the CDR form (header included) of a sample of schema.type(type);
// it is the same for every sample of a type without string<=N or T[<=N]
// (Type::variable false). For a variable type: its size with every bounded
// field empty.
[[nodiscard]] std::uint64_t cdr_size(const Schema& schema, std::size_t type);
// Size of the CDR form of `sample` (exactly the type's size): a string<=N
// is a uint32 length (counting a NUL), the bytes and the NUL, a T[<=N] a
// uint32 count and the elements used. Throws CdrError when a length in the
// sample is over its bound.
[[nodiscard]] std::uint64_t cdr_size(const Schema& schema, std::size_t type,
                                     std::span<const std::byte> sample);

// Whether the CDR payload of every sample of schema.type(type) is the
// sample's own bytes (no padding anywhere, no bool to normalise): its CDR
// form is then the 4-byte header followed by the sample as it is in memory.
[[nodiscard]] bool cdr_is_sample_image(const Schema& schema, std::size_t type);

// Writes the CDR form of `sample` (exactly the type's size) into `out`
// (exactly cdr_size(schema, type, sample) bytes). Padding is dropped; a bool
// is written 0 or 1. Throws CdrError when a size does not match or a length
// in the sample is over its bound.
void cdr_encode(const Schema& schema, std::size_t type, std::span<const std::byte> sample,
                std::span<std::byte> out);
// The same, appended to `out`.
void cdr_encode(const Schema& schema, std::size_t type, std::span<const std::byte> sample,
                std::vector<std::byte>& out);

// Reads `cdr` into `sample` (exactly the type's size; padding is zeroed).
// Throws CdrError on a wrong or big-endian header, a truncated payload, a
// bool other than 0 or 1, a string or sequence longer than its bound (never
// truncated; a CdrTooLong), a string without its NUL, or more than 3 bytes of trailing
// padding. The unused storage of a bounded field is left as it was.
void cdr_decode(const Schema& schema, std::size_t type, std::span<const std::byte> cdr,
                std::span<std::byte> sample);

// A bytes sample: header, uint32 length, data.
[[nodiscard]] std::uint64_t cdr_bytes_size(std::uint64_t data_size) noexcept;
void cdr_encode_bytes(std::span<const std::byte> data, std::vector<std::byte>& out);
// The same into `out`, exactly cdr_bytes_size(data.size()) bytes (a
// recorder's chunk buffer: the data is copied once).
void cdr_encode_bytes(std::span<const std::byte> data, std::span<std::byte> out);
// The data inside `cdr` (a view of it). Throws CdrError as cdr_decode does.
[[nodiscard]] std::span<const std::byte> cdr_decode_bytes(std::span<const std::byte> cdr);

}  // namespace ferry::config
