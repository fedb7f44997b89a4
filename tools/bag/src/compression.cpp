// lz4 frames and zstd frames for MCAP chunks; the CRC-32 (libdeflate's,
// and zlib's to combine two).

#include "ferry/bag/compression.hpp"

#include <libdeflate.h>
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

#include <memory>
#include <string>

#include "ferry/bag/bag_error.hpp"

namespace ferry::bag {

namespace {

void* bytes_of(std::vector<std::byte>& v) { return v.data(); }

void lz4_decompress(std::span<const std::byte> in, std::vector<std::byte>& out,
                    std::string_view file, std::uint64_t offset) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
    fail(file, "cannot create an lz4 decompression context");
  const std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> ctx(
      raw, &LZ4F_freeDecompressionContext);
  std::size_t in_pos = 0;
  std::size_t out_pos = 0;
  // Each call consumes input or produces output; a frame that does neither,
  // or that wants more than the chunk holds, is corrupt.
  for (;;) {
    std::size_t out_room = out.size() - out_pos;
    std::size_t in_size = in.size() - in_pos;
    const std::size_t hint = LZ4F_decompress(ctx.get(), static_cast<char*>(bytes_of(out)) + out_pos,
                                             &out_room, in.data() + in_pos, &in_size, nullptr);
    if (LZ4F_isError(hint))
      fail_at(file, offset,
              std::string("lz4 chunk does not decompress: ") + LZ4F_getErrorName(hint));
    in_pos += in_size;
    out_pos += out_room;
    if (hint == 0) break;  // the frame is complete
    if (in_size == 0 && out_room == 0)
      fail_at(file, offset,
              out_pos == out.size() ? "lz4 chunk holds more data than its uncompressed_size " +
                                          std::to_string(out.size())
                                    : std::string("lz4 chunk ends in the middle of its frame"));
  }
  if (out_pos != out.size())
    fail_at(file, offset,
            "lz4 chunk decompresses to " + std::to_string(out_pos) +
                " bytes but its uncompressed_size says " + std::to_string(out.size()));
}

}  // namespace

std::uint32_t crc32(std::span<const std::byte> data, std::uint32_t crc) noexcept {
  // libdeflate's carry-less-multiply CRC: ~10 GB/s here against zlib's
  // ~1.5 GB/s, which bounded what `ferry record` wrote per CPU-second.
  return ::libdeflate_crc32(crc, data.data(), data.size());
}

std::uint32_t crc32_append(std::uint32_t crc, std::uint32_t next_crc,
                           std::uint64_t next_size) noexcept {
  return static_cast<std::uint32_t>(
      ::crc32_combine64(crc, next_crc, static_cast<z_off64_t>(next_size)));
}

void compress(Compression compression, std::span<const std::byte> in, std::vector<std::byte>& out,
              std::string_view file) {
  switch (compression) {
    case Compression::None:
      out.assign(in.begin(), in.end());
      return;
    case Compression::Lz4: {
      LZ4F_preferences_t prefs{};
      prefs.frameInfo.contentSize = in.size();
      out.resize(LZ4F_compressFrameBound(in.size(), &prefs));
      const std::size_t n =
          LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
      if (LZ4F_isError(n))
        fail(file, std::string("lz4 compression failed: ") + LZ4F_getErrorName(n));
      out.resize(n);
      return;
    }
    case Compression::Zstd: {
      out.resize(ZSTD_compressBound(in.size()));
      const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 1);
      if (ZSTD_isError(n))
        fail(file, std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return;
    }
  }
}

void decompress(Compression compression, std::span<const std::byte> in,
                std::uint64_t uncompressed_size, std::vector<std::byte>& out, std::string_view file,
                std::uint64_t offset) {
  out.resize(uncompressed_size);
  switch (compression) {
    case Compression::None:
      if (in.size() != uncompressed_size)
        fail_at(file, offset,
                "uncompressed chunk holds " + std::to_string(in.size()) +
                    " bytes of records but its uncompressed_size says " +
                    std::to_string(uncompressed_size));
      out.assign(in.begin(), in.end());
      return;
    case Compression::Lz4:
      lz4_decompress(in, out, file, offset);
      return;
    case Compression::Zstd: {
      const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
      if (ZSTD_isError(n))
        fail_at(file, offset,
                std::string("zstd chunk does not decompress: ") + ZSTD_getErrorName(n));
      if (n != uncompressed_size)
        fail_at(file, offset,
                "zstd chunk decompresses to " + std::to_string(n) +
                    " bytes but its uncompressed_size says " + std::to_string(uncompressed_size));
      return;
    }
  }
}

}  // namespace ferry::bag
