#pragma once
// MCAP records (https://mcap.dev/spec, major version 0): the one place that
// knows their opcodes and field layouts. Writing appends a whole record
// (opcode, u64 content length, content) to a buffer; reading parses one
// record's content with every length checked against what is there.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::bag {

enum class Opcode : std::uint8_t {
  Header = 0x01,
  Footer = 0x02,
  Schema = 0x03,
  Channel = 0x04,
  Message = 0x05,
  Chunk = 0x06,
  MessageIndex = 0x07,
  ChunkIndex = 0x08,
  Attachment = 0x09,
  AttachmentIndex = 0x0A,
  Statistics = 0x0B,
  Metadata = 0x0C,
  MetadataIndex = 0x0D,
  SummaryOffset = 0x0E,
  DataEnd = 0x0F,
};

inline constexpr std::array<std::byte, 8> kMagic = {std::byte{0x89}, std::byte{'M'}, std::byte{'C'},
                                                    std::byte{'A'},  std::byte{'P'}, std::byte{'0'},
                                                    std::byte{'\r'}, std::byte{'\n'}};
// Opcode and content length.
inline constexpr std::size_t kRecordPrefixSize = 1 + 8;
// Footer content: summary_start, summary_offset_start, summary_crc.
inline constexpr std::size_t kFooterContentSize = 8 + 8 + 4;
inline constexpr std::size_t kFooterRecordSize = kRecordPrefixSize + kFooterContentSize;

enum class Compression : std::uint8_t { None, Lz4, Zstd };
// The chunk's compression string: "", "lz4", "zstd".
[[nodiscard]] std::string_view mcap_name(Compression compression) noexcept;
[[nodiscard]] std::optional<Compression> parse_mcap_compression(std::string_view name) noexcept;
// The command-line spelling: "none", "lz4", "zstd".
[[nodiscard]] std::string_view option_name(Compression compression) noexcept;
[[nodiscard]] std::optional<Compression> parse_compression_option(std::string_view name) noexcept;

using StringMap = std::vector<std::pair<std::string, std::string>>;  // sorted by key

struct HeaderRecord {
  std::string profile;
  std::string library;
};

struct FooterRecord {
  std::uint64_t summary_start = 0;
  std::uint64_t summary_offset_start = 0;
  std::uint32_t summary_crc = 0;
};

struct SchemaRecord {
  std::uint16_t id = 0;
  std::string name;
  std::string encoding;
  std::vector<std::byte> data;
};

struct ChannelRecord {
  std::uint16_t id = 0;
  std::uint16_t schema_id = 0;
  std::string topic;
  std::string message_encoding;
  StringMap metadata;

  // The metadata value under `key`, empty when there is none.
  [[nodiscard]] std::string metadata_value(std::string_view key) const {
    for (const auto& [k, v] : metadata)
      if (k == key) return v;
    return "";
  }
};

// Message header fields; the data is the rest of the record.
struct MessageHeader {
  std::uint16_t channel_id = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
};
inline constexpr std::size_t kMessageHeaderSize = 2 + 4 + 8 + 8;

struct ChunkHeader {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint32_t uncompressed_crc = 0;
  std::string compression;
  std::uint64_t records_size = 0;  // the (compressed) records that follow
};

struct MessageIndexRecord {
  std::uint16_t channel_id = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;  // log_time, offset in chunk
};

struct ChunkIndexRecord {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t chunk_start_offset = 0;
  std::uint64_t chunk_length = 0;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> message_index_offsets;
  std::uint64_t message_index_length = 0;
  std::string compression;
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
};

struct StatisticsRecord {
  std::uint64_t message_count = 0;
  std::uint16_t schema_count = 0;
  std::uint32_t channel_count = 0;
  std::uint32_t attachment_count = 0;
  std::uint32_t metadata_count = 0;
  std::uint32_t chunk_count = 0;
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> channel_message_counts;
};

struct MetadataRecord {
  std::string name;
  StringMap metadata;
};

struct MetadataIndexRecord {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string name;
};

struct SummaryOffsetRecord {
  Opcode group_opcode = Opcode::Schema;
  std::uint64_t group_start = 0;
  std::uint64_t group_length = 0;
};

struct DataEndRecord {
  std::uint32_t data_section_crc = 0;
};

// Append the whole record to `out`.
void append(std::vector<std::byte>& out, const HeaderRecord& r);
void append(std::vector<std::byte>& out, const FooterRecord& r);
void append(std::vector<std::byte>& out, const SchemaRecord& r);
void append(std::vector<std::byte>& out, const ChannelRecord& r);
void append(std::vector<std::byte>& out, const MessageIndexRecord& r);
void append(std::vector<std::byte>& out, const ChunkIndexRecord& r);
void append(std::vector<std::byte>& out, const StatisticsRecord& r);
void append(std::vector<std::byte>& out, const MetadataRecord& r);
void append(std::vector<std::byte>& out, const MetadataIndexRecord& r);
void append(std::vector<std::byte>& out, const SummaryOffsetRecord& r);
void append(std::vector<std::byte>& out, const DataEndRecord& r);
// A Message record's prefix and header; `data_size` bytes of data must follow.
void append_message_header(std::vector<std::byte>& out, const MessageHeader& r,
                           std::uint64_t data_size);
// A Chunk record's prefix and fields up to its records; `records_size` bytes follow.
void append_chunk_header(std::vector<std::byte>& out, const ChunkHeader& r);

// Reads a record's content. `where` names the place for errors (the file
// and the content's offset, see RecordSource); a field that runs past the
// content, or a content longer than its fields, is a BagError.
struct RecordSource {
  std::string_view file;
  std::uint64_t offset = 0;  // of the content's first byte in the file
  std::string_view inside;   // "" or e.g. "chunk at offset 1234, records byte "
};

[[nodiscard]] HeaderRecord parse_header(std::span<const std::byte> content, RecordSource where);
[[nodiscard]] FooterRecord parse_footer(std::span<const std::byte> content, RecordSource where);
[[nodiscard]] SchemaRecord parse_schema(std::span<const std::byte> content, RecordSource where);
[[nodiscard]] ChannelRecord parse_channel(std::span<const std::byte> content, RecordSource where);
// The message's data is returned as a view of `content`.
[[nodiscard]] MessageHeader parse_message(std::span<const std::byte> content, RecordSource where,
                                          std::span<const std::byte>& data);
// The chunk's records are returned as a view of `content`.
[[nodiscard]] ChunkHeader parse_chunk(std::span<const std::byte> content, RecordSource where,
                                      std::span<const std::byte>& records);
[[nodiscard]] MessageIndexRecord parse_message_index(std::span<const std::byte> content,
                                                     RecordSource where);
[[nodiscard]] ChunkIndexRecord parse_chunk_index(std::span<const std::byte> content,
                                                 RecordSource where);
[[nodiscard]] StatisticsRecord parse_statistics(std::span<const std::byte> content,
                                                RecordSource where);
[[nodiscard]] MetadataRecord parse_metadata(std::span<const std::byte> content, RecordSource where);
[[nodiscard]] MetadataIndexRecord parse_metadata_index(std::span<const std::byte> content,
                                                       RecordSource where);
[[nodiscard]] SummaryOffsetRecord parse_summary_offset(std::span<const std::byte> content,
                                                       RecordSource where);
[[nodiscard]] DataEndRecord parse_data_end(std::span<const std::byte> content, RecordSource where);

// One record in a byte range: its opcode, its content and where it starts.
struct RawRecord {
  std::uint8_t opcode = 0;
  std::uint64_t offset = 0;  // of the opcode, relative to the range's base
  std::span<const std::byte> content;
};
// The record at `pos` in `bytes`, or nothing when fewer than its 9-byte
// prefix or its content remain (the end of a file cut short).
[[nodiscard]] std::optional<RawRecord> next_record(std::span<const std::byte> bytes,
                                                   std::uint64_t pos);

}  // namespace ferry::bag
