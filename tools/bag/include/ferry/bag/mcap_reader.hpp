#pragma once
// Reads an MCAP file written by McapWriter or any other MCAP writer: its
// summary (or, for a file cut short, what a scan of its complete records
// shows) and its messages, chunk by chunk. The file is untrusted: every
// length is checked and each problem is a BagError naming the file and the
// offset.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ferry/bag/mcap_records.hpp"

namespace ferry::bag {

struct BagSummary {
  HeaderRecord header;
  std::map<std::uint16_t, SchemaRecord> schemas;
  std::map<std::uint16_t, ChannelRecord> channels;
  StatisticsRecord statistics;  // from the summary, or counted by a scan
  std::vector<ChunkIndexRecord> chunk_indexes;
  std::vector<MetadataIndexRecord> metadata_indexes;
  // False when the file has no summary (a writer that did not finish): the
  // above was rebuilt from the complete records of the data section.
  bool has_summary = false;
  // A file cut short: the offset of the first incomplete record.
  std::optional<std::uint64_t> truncated_at;
  std::uint64_t file_size = 0;
};

struct MessageView {
  const ChannelRecord* channel = nullptr;
  MessageHeader header;
  std::span<const std::byte> data;  // valid during the callback
};

class McapReader {
 public:
  // Maps `path` read-only and reads its summary; throws BagError.
  explicit McapReader(const std::filesystem::path& path);
  ~McapReader();
  McapReader(const McapReader&) = delete;
  McapReader& operator=(const McapReader&) = delete;

  [[nodiscard]] const BagSummary& summary() const noexcept { return summary_; }

  // Calls `visit` for each message in file order (decompressing chunks and
  // checking their CRC, unless `check_crcs` is false after verify() did)
  // until it returns false. In a file cut short, stops at the first
  // incomplete record.
  void for_each_message(const std::function<bool(const MessageView&)>& visit,
                        bool check_crcs = true) const;

  // The Metadata records, in file order.
  [[nodiscard]] std::vector<MetadataRecord> metadata() const;

  // Checks the data section CRC (DataEnd) and every chunk's CRC.
  void verify() const;

 private:
  // Walks the data section's top-level records (and those inside chunks
  // when `into_chunks`), calling on_record with each one.
  void scan(bool into_chunks, const std::function<bool(const RawRecord&, RecordSource)>& on_record,
            bool check_crcs = true) const;
  void read_summary();
  void rebuild_summary();
  [[nodiscard]] std::span<const std::byte> chunk_records(const RawRecord& chunk,
                                                         std::vector<std::byte>& buffer,
                                                         bool check_crc) const;
  [[nodiscard]] RecordSource at(std::uint64_t content_offset) const {
    return RecordSource{name_, content_offset, ""};
  }

  std::string name_;
  std::span<const std::byte> file_;
  void* map_ = nullptr;
  std::uint64_t data_end_ = 0;  // where the data section's records stop
  BagSummary summary_;
};

}  // namespace ferry::bag
