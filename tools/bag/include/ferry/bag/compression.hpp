#pragma once
// Chunk compression of MCAP files: lz4 (frame format) and zstd, and the
// CRC-32 (ISO-HDLC, as zlib computes it) that MCAP uses everywhere.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ferry/bag/mcap_records.hpp"

namespace ferry::bag {

[[nodiscard]] std::uint32_t crc32(std::span<const std::byte> data, std::uint32_t crc = 0) noexcept;
// The CRC of A followed by B from crc(A), crc(B) and B's size, without
// reading B again (a chunk's records are checksummed once for both the
// chunk and the data section).
[[nodiscard]] std::uint32_t crc32_append(std::uint32_t crc, std::uint32_t next_crc,
                                         std::uint64_t next_size) noexcept;

// Replaces `out` with `in` compressed. Throws BagError (naming `file`) when
// the library fails.
void compress(Compression compression, std::span<const std::byte> in, std::vector<std::byte>& out,
              std::string_view file);

// Replaces `out` with `in` decompressed, which must be exactly
// `uncompressed_size` bytes; anything else (corrupt data, a wrong size) is a
// BagError naming `file` and `offset` (the chunk's).
void decompress(Compression compression, std::span<const std::byte> in,
                std::uint64_t uncompressed_size, std::vector<std::byte>& out, std::string_view file,
                std::uint64_t offset);

}  // namespace ferry::bag
