#pragma once
// A ferry sample (C layout, with padding) <-> little-endian CDR as ROS 2 and
// DDS write it (docs/record-replay.md): the 4-byte encapsulation header 00 01 00 00,
// then the fields in declaration order, each primitive aligned to its size
// relative to the first byte after the header; fixed arrays and char[N] carry
// no length; a `bytes` sample is a uint32 length followed by the data.
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

inline constexpr std::size_t kCdrHeaderSize = 4;

// Size of the CDR form (header included) of a sample of schema.type(type);
// it is the same for every sample of a fixed-layout type.
[[nodiscard]] std::uint64_t cdr_size(const Schema& schema, std::size_t type);

// Whether the CDR payload of every sample of schema.type(type) is the
// sample's own bytes (no padding anywhere, no bool to normalise): its CDR
// form is then the 4-byte header followed by the sample as it is in memory.
[[nodiscard]] bool cdr_is_sample_image(const Schema& schema, std::size_t type);

// Writes the CDR form of `sample` (exactly the type's size) into `out`
// (exactly cdr_size() bytes). Padding is dropped; a bool is written 0 or 1.
// Throws CdrError when a size does not match.
void cdr_encode(const Schema& schema, std::size_t type, std::span<const std::byte> sample,
                std::span<std::byte> out);
// The same, appended to `out`.
void cdr_encode(const Schema& schema, std::size_t type, std::span<const std::byte> sample,
                std::vector<std::byte>& out);

// Reads `cdr` into `sample` (exactly the type's size; padding is zeroed).
// Throws CdrError on a wrong or big-endian header, a truncated payload, a
// bool other than 0 or 1, or more than 3 bytes of trailing padding.
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
