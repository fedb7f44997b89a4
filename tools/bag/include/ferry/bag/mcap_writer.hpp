#pragma once
// Writes an MCAP file (docs/record-replay.md): magic, Header, Schema and Channel
// records as they are added, messages inside Chunk records each followed by
// its MessageIndex records, then on close() DataEnd, the summary (Schema,
// Channel, Statistics, ChunkIndex, MetadataIndex groups), SummaryOffset
// records, Footer and magic. CRCs are filled in. A writer killed before
// close() leaves every chunk it wrote readable.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bag/mcap_records.hpp"

namespace ferry::bag {

struct WriterOptions {
  Compression compression = Compression::None;
  // A chunk is written once its records reach this size (a larger message
  // gets a chunk of its own).
  std::uint64_t chunk_size = 4u << 20;
  std::string profile = "ros2";
  std::string library = "ferry";
};

class McapWriter {
 public:
  // Creates (or truncates) `path`; throws BagError naming it.
  McapWriter(std::filesystem::path path, WriterOptions options = {});
  // Closes the file if close() was not called; errors are logged.
  ~McapWriter();
  McapWriter(const McapWriter&) = delete;
  McapWriter& operator=(const McapWriter&) = delete;

  // Ids start at 1 (0 means "no schema" in MCAP).
  std::uint16_t add_schema(std::string_view name, std::string_view encoding,
                           std::span<const std::byte> data);
  std::uint16_t add_channel(std::uint16_t schema_id, std::string_view topic,
                            std::string_view message_encoding, StringMap metadata = {});

  void write_message(const MessageHeader& header, std::span<const std::byte> data);
  // Room for `size` bytes of a message's data inside the chunk buffer, to be
  // filled before the next call on this writer (no copy on the way).
  [[nodiscard]] std::span<std::byte> reserve_message(const MessageHeader& header,
                                                     std::uint64_t size);

  // A message whose data is `prefix` then `body`, written from where they
  // are (e.g. a sample in shared memory) without a copy into the chunk
  // buffer: uncompressed, it gets a chunk of its own, sent with one
  // writev(). With compression it is copied into the chunk like any other.
  void write_message(const MessageHeader& header, std::span<const std::byte> prefix,
                     std::span<const std::byte> body);

  void add_metadata(std::string_view name, StringMap metadata);

  // Writes the open chunk now (a recorder does so every second, so that a
  // kill -9 loses at most the last second of a slow topic).
  void flush_chunk();

  // Writes the open chunk, the summary and the footer, and closes the file.
  void close();

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return offset_; }

 private:
  void write_raw(std::span<const std::byte> bytes);
  void write_raw(std::span<const std::span<const std::byte>> pieces);  // one writev()
  // The summary's statistics for one more message.
  void count_message(const MessageHeader& header);
  void write_data(std::span<const std::byte> bytes);  // counted in the data section's CRC

  std::filesystem::path path_;
  std::string name_;  // for errors
  WriterOptions options_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::uint32_t data_crc_ = 0;

  std::vector<SchemaRecord> schemas_;
  std::vector<ChannelRecord> channels_;
  std::vector<ChunkIndexRecord> chunk_indexes_;
  std::vector<MetadataIndexRecord> metadata_indexes_;
  StatisticsRecord stats_;
  std::map<std::uint16_t, std::uint64_t> channel_counts_;

  // The open chunk: its uncompressed records and per channel message index.
  std::vector<std::byte> chunk_;
  std::map<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> chunk_index_;
  std::uint64_t chunk_start_time_ = 0;
  std::uint64_t chunk_end_time_ = 0;
  std::vector<std::byte> compressed_;  // reused between chunks
  std::vector<std::byte> scratch_;
  std::vector<std::byte> message_head_;  // write_message(header, prefix, body)
};

}  // namespace ferry::bag
