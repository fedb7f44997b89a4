// MCAP record layouts (mcap.dev/spec): little-endian integers, strings and
// byte arrays with a u32 length, maps and arrays with a u32 byte length.

#include "ferry/bag/mcap_records.hpp"

#include <bit>
#include <cstring>

#include "ferry/bag/bag_error.hpp"

namespace ferry::bag {

static_assert(std::endian::native == std::endian::little, "MCAP integers are little-endian");

namespace {

// ---- writing --------------------------------------------------------------

class Out {
 public:
  explicit Out(std::vector<std::byte>& buffer) : buffer_(buffer) {}

  template <typename T>
  void put(T value) {
    const std::size_t at = buffer_.size();
    buffer_.resize(at + sizeof value);
    std::memcpy(buffer_.data() + at, &value, sizeof value);
  }
  void raw(const void* data, std::size_t size) {
    const std::size_t at = buffer_.size();
    buffer_.resize(at + size);
    if (size != 0) std::memcpy(buffer_.data() + at, data, size);
  }
  void string(std::string_view s) {
    put(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void map(const StringMap& m) {
    const std::size_t length_at = begin_length32();
    for (const auto& [key, value] : m) {
      string(key);
      string(value);
    }
    end_length32(length_at);
  }
  // A u32 byte length filled in by end_length32().
  std::size_t begin_length32() {
    put(std::uint32_t{0});
    return buffer_.size();
  }
  void end_length32(std::size_t start) {
    const auto length = static_cast<std::uint32_t>(buffer_.size() - start);
    std::memcpy(buffer_.data() + start - sizeof length, &length, sizeof length);
  }
  // Opcode and a u64 content length filled in by end_record().
  std::size_t begin_record(Opcode op) {
    put(static_cast<std::uint8_t>(op));
    put(std::uint64_t{0});
    return buffer_.size();
  }
  void end_record(std::size_t start) {
    const std::uint64_t length = buffer_.size() - start;
    std::memcpy(buffer_.data() + start - sizeof length, &length, sizeof length);
  }

 private:
  std::vector<std::byte>& buffer_;
};

// ---- reading --------------------------------------------------------------

class In {
 public:
  In(std::span<const std::byte> content, RecordSource where, std::string_view record)
      : content_(content), where_(where), record_(record) {}

  template <typename T>
  T get(std::string_view field) {
    T value;
    std::memcpy(&value, take(sizeof value, field).data(), sizeof value);
    return value;
  }
  std::span<const std::byte> take(std::uint64_t size, std::string_view field) {
    if (size > content_.size() - pos_)
      fail_at(where_.file, offset(),
              std::string(where_.inside) + std::string(record_) + " record's " +
                  std::string(field) + " needs " + std::to_string(size) + " bytes but only " +
                  std::to_string(content_.size() - pos_) + " remain in the record");
    const auto out = content_.subspan(pos_, size);
    pos_ += size;
    return out;
  }
  std::string string(std::string_view field) {
    const auto length = get<std::uint32_t>(field);
    const auto bytes = take(length, field);
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
  std::vector<std::byte> bytes32(std::string_view field) {
    const auto length = get<std::uint32_t>(field);
    const auto bytes = take(length, field);
    return {bytes.begin(), bytes.end()};
  }
  // The content of a u32-length-prefixed map or array.
  In sub32(std::string_view field) {
    const auto length = get<std::uint32_t>(field);
    const std::uint64_t start = pos_;
    const auto bytes = take(length, field);
    return In(bytes, RecordSource{where_.file, where_.offset + start, where_.inside}, record_);
  }
  StringMap map(std::string_view field) {
    In in = sub32(field);
    StringMap out;
    while (!in.done()) {
      std::string key = in.string(field);
      std::string value = in.string(field);
      out.emplace_back(std::move(key), std::move(value));
    }
    return out;
  }
  std::span<const std::byte> rest() { return take(content_.size() - pos_, "data"); }
  [[nodiscard]] bool done() const noexcept { return pos_ == content_.size(); }
  // Newer minor versions may append fields: extra bytes are allowed.
  // Inside a chunk's records the file offset is the chunk's (`inside` says
  // where in its records).
  [[nodiscard]] std::uint64_t offset() const noexcept {
    return where_.inside.empty() ? where_.offset + pos_ : where_.offset;
  }

 private:
  std::span<const std::byte> content_;
  RecordSource where_;
  std::string_view record_;
  std::uint64_t pos_ = 0;
};

}  // namespace

std::string_view mcap_name(Compression compression) noexcept {
  switch (compression) {
    case Compression::None:
      return "";
    case Compression::Lz4:
      return "lz4";
    case Compression::Zstd:
      return "zstd";
  }
  return "";
}

std::optional<Compression> parse_mcap_compression(std::string_view name) noexcept {
  if (name.empty()) return Compression::None;
  if (name == "lz4") return Compression::Lz4;
  if (name == "zstd") return Compression::Zstd;
  return std::nullopt;
}

std::string_view option_name(Compression compression) noexcept {
  return compression == Compression::None ? "none" : mcap_name(compression);
}

std::optional<Compression> parse_compression_option(std::string_view name) noexcept {
  if (name == "none") return Compression::None;
  if (name.empty()) return std::nullopt;
  return parse_mcap_compression(name);
}

void append(std::vector<std::byte>& out, const HeaderRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::Header);
  o.string(r.profile);
  o.string(r.library);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const FooterRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::Footer);
  o.put(r.summary_start);
  o.put(r.summary_offset_start);
  o.put(r.summary_crc);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const SchemaRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::Schema);
  o.put(r.id);
  o.string(r.name);
  o.string(r.encoding);
  o.put(static_cast<std::uint32_t>(r.data.size()));
  o.raw(r.data.data(), r.data.size());
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const ChannelRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::Channel);
  o.put(r.id);
  o.put(r.schema_id);
  o.string(r.topic);
  o.string(r.message_encoding);
  o.map(r.metadata);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const MessageIndexRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::MessageIndex);
  o.put(r.channel_id);
  const auto entries = o.begin_length32();
  for (const auto& [log_time, offset] : r.entries) {
    o.put(log_time);
    o.put(offset);
  }
  o.end_length32(entries);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const ChunkIndexRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::ChunkIndex);
  o.put(r.message_start_time);
  o.put(r.message_end_time);
  o.put(r.chunk_start_offset);
  o.put(r.chunk_length);
  const auto offsets = o.begin_length32();
  for (const auto& [channel, offset] : r.message_index_offsets) {
    o.put(channel);
    o.put(offset);
  }
  o.end_length32(offsets);
  o.put(r.message_index_length);
  o.string(r.compression);
  o.put(r.compressed_size);
  o.put(r.uncompressed_size);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const StatisticsRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::Statistics);
  o.put(r.message_count);
  o.put(r.schema_count);
  o.put(r.channel_count);
  o.put(r.attachment_count);
  o.put(r.metadata_count);
  o.put(r.chunk_count);
  o.put(r.message_start_time);
  o.put(r.message_end_time);
  const auto counts = o.begin_length32();
  for (const auto& [channel, count] : r.channel_message_counts) {
    o.put(channel);
    o.put(count);
  }
  o.end_length32(counts);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const MetadataRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::Metadata);
  o.string(r.name);
  o.map(r.metadata);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const MetadataIndexRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::MetadataIndex);
  o.put(r.offset);
  o.put(r.length);
  o.string(r.name);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const SummaryOffsetRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::SummaryOffset);
  o.put(static_cast<std::uint8_t>(r.group_opcode));
  o.put(r.group_start);
  o.put(r.group_length);
  o.end_record(start);
}

void append(std::vector<std::byte>& out, const DataEndRecord& r) {
  Out o(out);
  const auto start = o.begin_record(Opcode::DataEnd);
  o.put(r.data_section_crc);
  o.end_record(start);
}

void append_message_header(std::vector<std::byte>& out, const MessageHeader& r,
                           std::uint64_t data_size) {
  Out o(out);
  o.put(static_cast<std::uint8_t>(Opcode::Message));
  o.put(static_cast<std::uint64_t>(kMessageHeaderSize + data_size));
  o.put(r.channel_id);
  o.put(r.sequence);
  o.put(r.log_time);
  o.put(r.publish_time);
}

void append_chunk_header(std::vector<std::byte>& out, const ChunkHeader& r) {
  Out o(out);
  o.put(static_cast<std::uint8_t>(Opcode::Chunk));
  const std::uint64_t fields = 8 + 8 + 8 + 4 + 4 + r.compression.size() + 8;
  o.put(static_cast<std::uint64_t>(fields + r.records_size));
  o.put(r.message_start_time);
  o.put(r.message_end_time);
  o.put(r.uncompressed_size);
  o.put(r.uncompressed_crc);
  o.string(r.compression);
  o.put(r.records_size);
}

HeaderRecord parse_header(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "Header");
  HeaderRecord r;
  r.profile = in.string("profile");
  r.library = in.string("library");
  return r;
}

FooterRecord parse_footer(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "Footer");
  FooterRecord r;
  r.summary_start = in.get<std::uint64_t>("summary_start");
  r.summary_offset_start = in.get<std::uint64_t>("summary_offset_start");
  r.summary_crc = in.get<std::uint32_t>("summary_crc");
  return r;
}

SchemaRecord parse_schema(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "Schema");
  SchemaRecord r;
  r.id = in.get<std::uint16_t>("id");
  r.name = in.string("name");
  r.encoding = in.string("encoding");
  r.data = in.bytes32("data");
  return r;
}

ChannelRecord parse_channel(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "Channel");
  ChannelRecord r;
  r.id = in.get<std::uint16_t>("id");
  r.schema_id = in.get<std::uint16_t>("schema_id");
  r.topic = in.string("topic");
  r.message_encoding = in.string("message_encoding");
  r.metadata = in.map("metadata");
  return r;
}

MessageHeader parse_message(std::span<const std::byte> content, RecordSource where,
                            std::span<const std::byte>& data) {
  In in(content, where, "Message");
  MessageHeader r;
  r.channel_id = in.get<std::uint16_t>("channel_id");
  r.sequence = in.get<std::uint32_t>("sequence");
  r.log_time = in.get<std::uint64_t>("log_time");
  r.publish_time = in.get<std::uint64_t>("publish_time");
  data = in.rest();
  return r;
}

ChunkHeader parse_chunk(std::span<const std::byte> content, RecordSource where,
                        std::span<const std::byte>& records) {
  In in(content, where, "Chunk");
  ChunkHeader r;
  r.message_start_time = in.get<std::uint64_t>("message_start_time");
  r.message_end_time = in.get<std::uint64_t>("message_end_time");
  r.uncompressed_size = in.get<std::uint64_t>("uncompressed_size");
  r.uncompressed_crc = in.get<std::uint32_t>("uncompressed_crc");
  r.compression = in.string("compression");
  r.records_size = in.get<std::uint64_t>("records length");
  records = in.take(r.records_size, "records");
  return r;
}

MessageIndexRecord parse_message_index(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "MessageIndex");
  MessageIndexRecord r;
  r.channel_id = in.get<std::uint16_t>("channel_id");
  In entries = in.sub32("records");
  while (!entries.done()) {
    const auto log_time = entries.get<std::uint64_t>("log_time");
    const auto offset = entries.get<std::uint64_t>("offset");
    r.entries.emplace_back(log_time, offset);
  }
  return r;
}

ChunkIndexRecord parse_chunk_index(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "ChunkIndex");
  ChunkIndexRecord r;
  r.message_start_time = in.get<std::uint64_t>("message_start_time");
  r.message_end_time = in.get<std::uint64_t>("message_end_time");
  r.chunk_start_offset = in.get<std::uint64_t>("chunk_start_offset");
  r.chunk_length = in.get<std::uint64_t>("chunk_length");
  In offsets = in.sub32("message_index_offsets");
  while (!offsets.done()) {
    const auto channel = offsets.get<std::uint16_t>("message_index_offsets");
    const auto offset = offsets.get<std::uint64_t>("message_index_offsets");
    r.message_index_offsets.emplace_back(channel, offset);
  }
  r.message_index_length = in.get<std::uint64_t>("message_index_length");
  r.compression = in.string("compression");
  r.compressed_size = in.get<std::uint64_t>("compressed_size");
  r.uncompressed_size = in.get<std::uint64_t>("uncompressed_size");
  return r;
}

StatisticsRecord parse_statistics(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "Statistics");
  StatisticsRecord r;
  r.message_count = in.get<std::uint64_t>("message_count");
  r.schema_count = in.get<std::uint16_t>("schema_count");
  r.channel_count = in.get<std::uint32_t>("channel_count");
  r.attachment_count = in.get<std::uint32_t>("attachment_count");
  r.metadata_count = in.get<std::uint32_t>("metadata_count");
  r.chunk_count = in.get<std::uint32_t>("chunk_count");
  r.message_start_time = in.get<std::uint64_t>("message_start_time");
  r.message_end_time = in.get<std::uint64_t>("message_end_time");
  In counts = in.sub32("channel_message_counts");
  while (!counts.done()) {
    const auto channel = counts.get<std::uint16_t>("channel_message_counts");
    const auto count = counts.get<std::uint64_t>("channel_message_counts");
    r.channel_message_counts.emplace_back(channel, count);
  }
  return r;
}

MetadataRecord parse_metadata(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "Metadata");
  MetadataRecord r;
  r.name = in.string("name");
  r.metadata = in.map("metadata");
  return r;
}

MetadataIndexRecord parse_metadata_index(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "MetadataIndex");
  MetadataIndexRecord r;
  r.offset = in.get<std::uint64_t>("offset");
  r.length = in.get<std::uint64_t>("length");
  r.name = in.string("name");
  return r;
}

SummaryOffsetRecord parse_summary_offset(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "SummaryOffset");
  SummaryOffsetRecord r;
  r.group_opcode = static_cast<Opcode>(in.get<std::uint8_t>("group_opcode"));
  r.group_start = in.get<std::uint64_t>("group_start");
  r.group_length = in.get<std::uint64_t>("group_length");
  return r;
}

DataEndRecord parse_data_end(std::span<const std::byte> content, RecordSource where) {
  In in(content, where, "DataEnd");
  return DataEndRecord{in.get<std::uint32_t>("data_section_crc")};
}

std::optional<RawRecord> next_record(std::span<const std::byte> bytes, std::uint64_t pos) {
  if (pos > bytes.size() || bytes.size() - pos < kRecordPrefixSize) return std::nullopt;
  RawRecord r;
  r.opcode = std::to_integer<std::uint8_t>(bytes[pos]);
  r.offset = pos;
  std::uint64_t length = 0;
  std::memcpy(&length, bytes.data() + pos + 1, sizeof length);
  if (length > bytes.size() - pos - kRecordPrefixSize) return std::nullopt;
  r.content = bytes.subspan(pos + kRecordPrefixSize, length);
  return r;
}

}  // namespace ferry::bag
