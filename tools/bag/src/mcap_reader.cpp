// McapReader: mmap, footer and summary first, data section on demand.

#include "ferry/bag/mcap_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ferry/bag/bag_error.hpp"
#include "ferry/bag/compression.hpp"

namespace ferry::bag {

namespace {

// A chunk says how large it decompresses; a hostile file must not make the
// reader allocate more than this.
constexpr std::uint64_t kMaxChunkSize = 1ull << 30;

std::string hex(std::uint32_t v) {
  char text[11];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

bool has_magic(std::span<const std::byte> bytes) {
  return bytes.size() >= kMagic.size() && std::equal(kMagic.begin(), kMagic.end(), bytes.begin());
}

}  // namespace

McapReader::McapReader(const std::filesystem::path& path) : name_(path.string()) {
  // O_NONBLOCK: opening a FIFO without a writer would wait for one forever
  // (it has no effect on the regular file read below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(name_, std::string("cannot open the file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(name_, std::string("is ") +
                    (S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a special file") +
                    ", not a regular file; expected an MCAP file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  summary_.file_size = size;
  if (size < kMagic.size()) {
    ::close(fd);
    fail_at(name_, 0,
            "is not an MCAP file: " + std::to_string(size) + " bytes, fewer than the 8-byte magic");
  }
  map_ = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    fail(name_, std::string("cannot map the file: ") + std::strerror(errno));
  }
  file_ = std::span<const std::byte>(static_cast<const std::byte*>(map_), size);
  try {
    if (!has_magic(file_)) fail_at(name_, 0, "is not an MCAP file: no MCAP magic at the start");
    const auto header = next_record(file_, kMagic.size());
    if (!header || header->opcode != static_cast<std::uint8_t>(Opcode::Header))
      fail_at(name_, kMagic.size(), "the Header record that must follow the magic is missing");
    summary_.header = parse_header(header->content, at(kMagic.size() + kRecordPrefixSize));
    read_summary();
  } catch (...) {
    ::munmap(map_, file_.size());
    throw;
  }
}

McapReader::~McapReader() {
  if (map_ != nullptr) ::munmap(map_, file_.size());
}

void McapReader::read_summary() {
  const std::uint64_t size = file_.size();
  const std::uint64_t data_start =
      kMagic.size() + kRecordPrefixSize + next_record(file_, kMagic.size())->content.size();
  const bool has_footer = size >= data_start + kFooterRecordSize + kMagic.size() &&
                          has_magic(file_.subspan(size - kMagic.size())) &&
                          file_[size - kMagic.size() - kFooterRecordSize] ==
                              std::byte{static_cast<std::uint8_t>(Opcode::Footer)};
  if (!has_footer) {
    // A writer that never finished: what its complete records hold.
    data_end_ = size;
    rebuild_summary();
    return;
  }
  const std::uint64_t footer_at = size - kMagic.size() - kFooterRecordSize;
  const auto footer_record = next_record(file_.first(size - kMagic.size()), footer_at);
  if (!footer_record || footer_record->content.size() != kFooterContentSize)
    fail_at(name_, footer_at, "the Footer record's length is not 20");
  const FooterRecord footer =
      parse_footer(footer_record->content, at(footer_at + kRecordPrefixSize));
  if (footer.summary_start == 0) {
    data_end_ = footer_at;
    rebuild_summary();
    return;
  }
  if (footer.summary_start < data_start || footer.summary_start > footer_at)
    fail_at(name_, footer_at + kRecordPrefixSize,
            "the Footer's summary_start " + std::to_string(footer.summary_start) +
                " is outside the file's records");
  std::uint64_t summary_end = footer_at;
  if (footer.summary_offset_start != 0) {
    if (footer.summary_offset_start < footer.summary_start ||
        footer.summary_offset_start > footer_at)
      fail_at(name_, footer_at + kRecordPrefixSize + 8,
              "the Footer's summary_offset_start " + std::to_string(footer.summary_offset_start) +
                  " is outside the summary");
    summary_end = footer.summary_offset_start;
  }
  if (footer.summary_crc != 0) {
    const std::uint64_t crc_end = footer_at + kRecordPrefixSize + 16;
    const std::uint32_t crc =
        crc32(file_.subspan(footer.summary_start, crc_end - footer.summary_start));
    if (crc != footer.summary_crc)
      fail_at(
          name_, footer_at + kRecordPrefixSize + 16,
          "the summary's CRC is " + hex(crc) + " but the Footer says " + hex(footer.summary_crc));
  }
  data_end_ = footer.summary_start;
  summary_.has_summary = true;
  const auto section = file_.first(summary_end);
  for (std::uint64_t pos = footer.summary_start; pos < summary_end;) {
    const auto r = next_record(section, pos);
    if (!r) fail_at(name_, pos, "the summary record here runs past the summary's end");
    const RecordSource where = at(pos + kRecordPrefixSize);
    switch (static_cast<Opcode>(r->opcode)) {
      case Opcode::Schema: {
        SchemaRecord s = parse_schema(r->content, where);
        summary_.schemas[s.id] = std::move(s);
        break;
      }
      case Opcode::Channel: {
        ChannelRecord c = parse_channel(r->content, where);
        summary_.channels[c.id] = std::move(c);
        break;
      }
      case Opcode::Statistics:
        summary_.statistics = parse_statistics(r->content, where);
        break;
      case Opcode::ChunkIndex:
        summary_.chunk_indexes.push_back(parse_chunk_index(r->content, where));
        break;
      case Opcode::MetadataIndex:
        summary_.metadata_indexes.push_back(parse_metadata_index(r->content, where));
        break;
      default:
        break;  // attachment indexes and records of newer versions
    }
    pos += kRecordPrefixSize + r->content.size();
  }
}

std::span<const std::byte> McapReader::chunk_records(const RawRecord& chunk,
                                                     std::vector<std::byte>& buffer,
                                                     bool check_crc) const {
  std::span<const std::byte> records;
  const ChunkHeader header =
      parse_chunk(chunk.content, at(chunk.offset + kRecordPrefixSize), records);
  const auto compression = parse_mcap_compression(header.compression);
  if (!compression)
    fail_at(name_, chunk.offset,
            "the chunk's compression '" + header.compression +
                "' is unknown; expected none, lz4 or zstd");
  if (header.uncompressed_size > kMaxChunkSize)
    fail_at(name_, chunk.offset,
            "the chunk's uncompressed_size " + std::to_string(header.uncompressed_size) +
                " is over the 1 GiB this reader accepts");
  std::span<const std::byte> out = records;
  if (*compression != Compression::None) {
    decompress(*compression, records, header.uncompressed_size, buffer, name_, chunk.offset);
    out = buffer;
  } else if (records.size() != header.uncompressed_size) {
    fail_at(name_, chunk.offset,
            "the uncompressed chunk holds " + std::to_string(records.size()) +
                " bytes but its uncompressed_size says " +
                std::to_string(header.uncompressed_size));
  }
  if (check_crc && header.uncompressed_crc != 0) {
    const std::uint32_t crc = crc32(out);
    if (crc != header.uncompressed_crc)
      fail_at(
          name_, chunk.offset,
          "the chunk's CRC is " + hex(crc) + " but the chunk says " + hex(header.uncompressed_crc));
  }
  return out;
}

void McapReader::scan(bool into_chunks,
                      const std::function<bool(const RawRecord&, RecordSource)>& on_record,
                      bool check_crcs) const {
  const auto section = file_.first(data_end_);
  std::uint64_t pos =
      kMagic.size() + kRecordPrefixSize + next_record(file_, kMagic.size())->content.size();
  std::vector<std::byte> buffer;
  std::string inside;
  while (pos < data_end_) {
    const auto r = next_record(section, pos);
    if (!r) return;  // a file cut short: rebuild_summary() reports where
    if (r->opcode == static_cast<std::uint8_t>(Opcode::DataEnd)) return;
    if (!on_record(*r, at(pos + kRecordPrefixSize))) return;
    if (into_chunks && r->opcode == static_cast<std::uint8_t>(Opcode::Chunk)) {
      const auto records = chunk_records(*r, buffer, check_crcs);
      for (std::uint64_t in = 0; in < records.size();) {
        const auto inner = next_record(records, in);
        if (!inner)
          fail_at(name_, pos,
                  "the record at byte " + std::to_string(in) +
                      " of the chunk's records runs past the chunk's end");
        inside = "in the chunk's records at byte " + std::to_string(in) + ": ";
        if (!on_record(*inner, RecordSource{name_, pos, inside})) return;
        in += kRecordPrefixSize + inner->content.size();
      }
    }
    pos += kRecordPrefixSize + r->content.size();
  }
}

void McapReader::rebuild_summary() {
  std::map<std::uint16_t, std::uint64_t> counts;
  StatisticsRecord& stats = summary_.statistics;
  std::uint64_t end =
      kMagic.size() + kRecordPrefixSize + next_record(file_, kMagic.size())->content.size();
  scan(true, [&](const RawRecord& r, RecordSource where) {
    const bool top_level = where.inside.empty();
    if (top_level) end = r.offset + kRecordPrefixSize + r.content.size();
    switch (static_cast<Opcode>(r.opcode)) {
      case Opcode::Schema: {
        SchemaRecord s = parse_schema(r.content, where);
        summary_.schemas[s.id] = std::move(s);
        break;
      }
      case Opcode::Channel: {
        ChannelRecord c = parse_channel(r.content, where);
        summary_.channels[c.id] = std::move(c);
        break;
      }
      case Opcode::Message: {
        std::span<const std::byte> data;
        const MessageHeader m = parse_message(r.content, where, data);
        if (stats.message_count == 0)
          stats.message_start_time = stats.message_end_time = m.log_time;
        stats.message_start_time = std::min(stats.message_start_time, m.log_time);
        stats.message_end_time = std::max(stats.message_end_time, m.log_time);
        ++stats.message_count;
        ++counts[m.channel_id];
        break;
      }
      case Opcode::Chunk:
        ++stats.chunk_count;
        break;
      case Opcode::Metadata:
        ++stats.metadata_count;
        break;
      default:
        break;
    }
    return true;
  });
  stats.schema_count = static_cast<std::uint16_t>(summary_.schemas.size());
  stats.channel_count = static_cast<std::uint32_t>(summary_.channels.size());
  stats.channel_message_counts.assign(counts.begin(), counts.end());
  // Scanning stopped early only at an incomplete record or at DataEnd.
  const auto stop = next_record(file_.first(data_end_), end);
  if (end < data_end_ && !stop) summary_.truncated_at = end;
}

void McapReader::for_each_message(const std::function<bool(const MessageView&)>& visit,
                                  bool check_crcs) const {
  std::map<std::uint16_t, ChannelRecord> found;  // channels inside chunks of other writers
  scan(
      true,
      [&](const RawRecord& r, RecordSource where) {
        if (r.opcode == static_cast<std::uint8_t>(Opcode::Channel) && !summary_.has_summary) {
          ChannelRecord c = parse_channel(r.content, where);
          found[c.id] = std::move(c);
          return true;
        }
        if (r.opcode != static_cast<std::uint8_t>(Opcode::Message)) return true;
        MessageView m;
        m.header = parse_message(r.content, where, m.data);
        auto it = summary_.channels.find(m.header.channel_id);
        if (it == summary_.channels.end()) {
          it = found.find(m.header.channel_id);
          if (it == found.end())
            fail_at(name_, where.offset,
                    std::string(where.inside) + "a message names channel " +
                        std::to_string(m.header.channel_id) + ", which no Channel record defines");
        }
        m.channel = &it->second;
        return visit(m);
      },
      check_crcs);
}

std::vector<MetadataRecord> McapReader::metadata() const {
  std::vector<MetadataRecord> out;
  scan(false, [&](const RawRecord& r, RecordSource where) {
    if (r.opcode == static_cast<std::uint8_t>(Opcode::Metadata))
      out.push_back(parse_metadata(r.content, where));
    return true;
  });
  return out;
}

void McapReader::verify() const {
  std::optional<std::uint64_t> data_end_at;
  scan(true, [](const RawRecord&, RecordSource) { return true; });  // chunk CRCs
  // DataEnd: the record scan() stops at.
  std::uint64_t pos =
      kMagic.size() + kRecordPrefixSize + next_record(file_, kMagic.size())->content.size();
  const auto section = file_.first(data_end_);
  while (const auto r = next_record(section, pos)) {
    if (r->opcode == static_cast<std::uint8_t>(Opcode::DataEnd)) {
      data_end_at = pos;
      const DataEndRecord end = parse_data_end(r->content, at(pos + kRecordPrefixSize));
      if (end.data_section_crc == 0) return;
      const std::uint32_t crc = crc32(file_.first(pos));
      if (crc != end.data_section_crc)
        fail_at(name_, pos,
                "the data section's CRC is " + hex(crc) + " but the DataEnd record says " +
                    hex(end.data_section_crc));
      return;
    }
    pos += kRecordPrefixSize + r->content.size();
  }
  if (summary_.truncated_at)
    fail_at(name_, *summary_.truncated_at,
            "the file is cut short: this record is incomplete and there is no summary");
  if (!data_end_at) fail_at(name_, pos, "the data section has no DataEnd record");
}

}  // namespace ferry::bag
