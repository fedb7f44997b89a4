// McapWriter: buffered chunks, one write() per chunk (a large message from
// where it lies: one writev()), summary on close.

#include "ferry/bag/mcap_writer.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>

#include "ferry/bag/bag_error.hpp"
#include "ferry/bag/compression.hpp"

namespace ferry::bag {

McapWriter::McapWriter(std::filesystem::path path, WriterOptions options)
    : path_(std::move(path)), name_(path_.string()), options_(std::move(options)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(name_, std::string("cannot create the file: ") + std::strerror(errno));
  scratch_.assign(kMagic.begin(), kMagic.end());
  append(scratch_, HeaderRecord{options_.profile, options_.library});
  write_data(scratch_);
}

McapWriter::~McapWriter() {
  if (fd_ < 0) return;
  try {
    close();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    ::close(fd_);
  }
}

void McapWriter::write_raw(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      fail_at(name_, offset_, std::string("cannot write the file: ") + std::strerror(errno));
    offset_ += static_cast<std::uint64_t>(n);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

void McapWriter::write_raw(std::span<const std::span<const std::byte>> pieces) {
  constexpr std::size_t kMaxPieces = 4;
  std::array<iovec, kMaxPieces> vec{};
  std::size_t count = 0;
  for (const auto piece : pieces) {
    if (piece.empty()) continue;
    if (count == kMaxPieces) fail(name_, "more than 4 pieces in one write");
    vec[count++] = iovec{const_cast<std::byte*>(piece.data()), piece.size()};
  }
  std::size_t first = 0;
  while (first < count) {
    const ssize_t n = ::writev(fd_, vec.data() + first, static_cast<int>(count - first));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      fail_at(name_, offset_, std::string("cannot write the file: ") + std::strerror(errno));
    offset_ += static_cast<std::uint64_t>(n);
    // Skip what was written: whole pieces, then part of the next one.
    auto left = static_cast<std::size_t>(n);
    while (first < count && left >= vec[first].iov_len) left -= vec[first++].iov_len;
    if (first < count) {
      vec[first].iov_base = static_cast<std::byte*>(vec[first].iov_base) + left;
      vec[first].iov_len -= left;
    }
  }
}

void McapWriter::write_data(std::span<const std::byte> bytes) {
  data_crc_ = crc32(bytes, data_crc_);
  write_raw(bytes);
}

std::uint16_t McapWriter::add_schema(std::string_view name, std::string_view encoding,
                                     std::span<const std::byte> data) {
  if (schemas_.size() >= std::numeric_limits<std::uint16_t>::max())
    fail(name_, "more than 65535 schemas");
  SchemaRecord r{static_cast<std::uint16_t>(schemas_.size() + 1),
                 std::string(name),
                 std::string(encoding),
                 {data.begin(), data.end()}};
  scratch_.clear();
  append(scratch_, r);
  write_data(scratch_);
  schemas_.push_back(std::move(r));
  return schemas_.back().id;
}

std::uint16_t McapWriter::add_channel(std::uint16_t schema_id, std::string_view topic,
                                      std::string_view message_encoding, StringMap metadata) {
  if (channels_.size() >= std::numeric_limits<std::uint16_t>::max())
    fail(name_, "more than 65535 channels");
  if (schema_id > schemas_.size())
    fail(name_, "channel '" + std::string(topic) + "' names schema " + std::to_string(schema_id) +
                    ", which was not added");
  std::sort(metadata.begin(), metadata.end());
  ChannelRecord r{static_cast<std::uint16_t>(channels_.size() + 1), schema_id, std::string(topic),
                  std::string(message_encoding), std::move(metadata)};
  scratch_.clear();
  append(scratch_, r);
  write_data(scratch_);
  channels_.push_back(std::move(r));
  return channels_.back().id;
}

std::span<std::byte> McapWriter::reserve_message(const MessageHeader& header, std::uint64_t size) {
  if (header.channel_id == 0 || header.channel_id > channels_.size())
    fail(name_,
         "a message names channel " + std::to_string(header.channel_id) + ", which was not added");
  if (!chunk_.empty() &&
      chunk_.size() + kRecordPrefixSize + kMessageHeaderSize + size > options_.chunk_size)
    flush_chunk();
  if (chunk_.empty()) {
    chunk_start_time_ = header.log_time;
    chunk_end_time_ = header.log_time;
  }
  chunk_start_time_ = std::min(chunk_start_time_, header.log_time);
  chunk_end_time_ = std::max(chunk_end_time_, header.log_time);
  chunk_index_[header.channel_id].emplace_back(header.log_time, chunk_.size());
  append_message_header(chunk_, header, size);
  const std::size_t at = chunk_.size();
  chunk_.resize(at + size);
  count_message(header);
  return std::span<std::byte>(chunk_).subspan(at, size);
}

void McapWriter::count_message(const MessageHeader& header) {
  if (stats_.message_count == 0) {
    stats_.message_start_time = header.log_time;
    stats_.message_end_time = header.log_time;
  }
  stats_.message_start_time = std::min(stats_.message_start_time, header.log_time);
  stats_.message_end_time = std::max(stats_.message_end_time, header.log_time);
  ++stats_.message_count;
  ++channel_counts_[header.channel_id];
}

void McapWriter::write_message(const MessageHeader& header, std::span<const std::byte> prefix,
                               std::span<const std::byte> body) {
  if (options_.compression != Compression::None) {
    const std::span<std::byte> room = reserve_message(header, prefix.size() + body.size());
    if (!prefix.empty()) std::memcpy(room.data(), prefix.data(), prefix.size());
    if (!body.empty()) std::memcpy(room.data() + prefix.size(), body.data(), body.size());
    return;
  }
  if (header.channel_id == 0 || header.channel_id > channels_.size())
    fail(name_,
         "a message names channel " + std::to_string(header.channel_id) + ", which was not added");
  flush_chunk();  // the open chunk first: files keep the order messages came in

  // The chunk's records: this message's record up to its data, then the data.
  message_head_.clear();
  append_message_header(message_head_, header, prefix.size() + body.size());
  message_head_.insert(message_head_.end(), prefix.begin(), prefix.end());
  const std::uint64_t records_size = message_head_.size() + body.size();
  ChunkHeader chunk;
  chunk.message_start_time = header.log_time;
  chunk.message_end_time = header.log_time;
  chunk.uncompressed_size = records_size;
  chunk.uncompressed_crc = crc32(body, crc32(message_head_));
  chunk.compression = std::string(mcap_name(Compression::None));
  chunk.records_size = records_size;

  ChunkIndexRecord index;
  index.message_start_time = header.log_time;
  index.message_end_time = header.log_time;
  index.chunk_start_offset = offset_;
  index.compression = chunk.compression;
  index.compressed_size = records_size;
  index.uncompressed_size = records_size;

  scratch_.clear();
  append_chunk_header(scratch_, chunk);
  data_crc_ = crc32(scratch_, data_crc_);
  data_crc_ = crc32_append(data_crc_, chunk.uncompressed_crc, records_size);
  const std::array<std::span<const std::byte>, 3> pieces{scratch_, message_head_, body};
  write_raw(pieces);
  index.chunk_length = offset_ - index.chunk_start_offset;

  scratch_.clear();
  index.message_index_offsets.emplace_back(header.channel_id, offset_);
  append(scratch_, MessageIndexRecord{header.channel_id, {{header.log_time, 0}}});
  write_data(scratch_);
  index.message_index_length = scratch_.size();
  chunk_indexes_.push_back(std::move(index));
  ++stats_.chunk_count;
  count_message(header);
}

void McapWriter::write_message(const MessageHeader& header, std::span<const std::byte> data) {
  const std::span<std::byte> room = reserve_message(header, data.size());
  if (!data.empty()) std::memcpy(room.data(), data.data(), data.size());
}

void McapWriter::add_metadata(std::string_view name, StringMap metadata) {
  std::sort(metadata.begin(), metadata.end());
  scratch_.clear();
  append(scratch_, MetadataRecord{std::string(name), std::move(metadata)});
  metadata_indexes_.push_back(MetadataIndexRecord{offset_, scratch_.size(), std::string(name)});
  write_data(scratch_);
  ++stats_.metadata_count;
}

void McapWriter::flush_chunk() {
  if (chunk_.empty()) return;
  const Compression compression = options_.compression;
  std::span<const std::byte> records = chunk_;
  if (compression != Compression::None) {
    compress(compression, chunk_, compressed_, name_);
    records = compressed_;
  }
  ChunkHeader header;
  header.message_start_time = chunk_start_time_;
  header.message_end_time = chunk_end_time_;
  header.uncompressed_size = chunk_.size();
  header.uncompressed_crc = crc32(chunk_);
  header.compression = std::string(mcap_name(compression));
  header.records_size = records.size();

  ChunkIndexRecord index;
  index.message_start_time = chunk_start_time_;
  index.message_end_time = chunk_end_time_;
  index.chunk_start_offset = offset_;
  index.compression = header.compression;
  index.compressed_size = records.size();
  index.uncompressed_size = chunk_.size();

  scratch_.clear();
  append_chunk_header(scratch_, header);
  write_data(scratch_);
  if (compression == Compression::None) {
    // The records are the chunk's: their CRC is known already.
    data_crc_ = crc32_append(data_crc_, header.uncompressed_crc, records.size());
    write_raw(records);
  } else {
    write_data(records);
  }
  index.chunk_length = offset_ - index.chunk_start_offset;

  const std::uint64_t indexes_start = offset_;
  scratch_.clear();
  for (auto& [channel, entries] : chunk_index_) {
    index.message_index_offsets.emplace_back(channel, indexes_start + scratch_.size());
    append(scratch_, MessageIndexRecord{channel, std::move(entries)});
  }
  write_data(scratch_);
  index.message_index_length = scratch_.size();

  chunk_indexes_.push_back(std::move(index));
  ++stats_.chunk_count;
  chunk_.clear();
  chunk_index_.clear();
}

void McapWriter::close() {
  if (fd_ < 0) return;
  flush_chunk();
  scratch_.clear();
  append(scratch_, DataEndRecord{data_crc_});
  write_raw(scratch_);

  // Summary: each group's records, then one SummaryOffset per group.
  const std::uint64_t summary_start = offset_;
  std::vector<std::byte> summary;
  std::vector<SummaryOffsetRecord> groups;
  auto group = [&](Opcode op, auto&& write_records) {
    const std::size_t start = summary.size();
    write_records();
    if (summary.size() != start)
      groups.push_back(SummaryOffsetRecord{op, summary_start + start, summary.size() - start});
  };
  group(Opcode::Schema, [&] {
    for (const auto& s : schemas_) append(summary, s);
  });
  group(Opcode::Channel, [&] {
    for (const auto& c : channels_) append(summary, c);
  });
  stats_.schema_count = static_cast<std::uint16_t>(schemas_.size());
  stats_.channel_count = static_cast<std::uint32_t>(channels_.size());
  stats_.channel_message_counts.assign(channel_counts_.begin(), channel_counts_.end());
  group(Opcode::Statistics, [&] { append(summary, stats_); });
  group(Opcode::ChunkIndex, [&] {
    for (const auto& c : chunk_indexes_) append(summary, c);
  });
  group(Opcode::MetadataIndex, [&] {
    for (const auto& m : metadata_indexes_) append(summary, m);
  });
  const std::uint64_t summary_offset_start = summary_start + summary.size();
  for (const auto& g : groups) append(summary, g);

  // The summary CRC covers the summary up to the footer's summary_crc field.
  append(summary, FooterRecord{summary_start, summary_offset_start, 0});
  const std::size_t crc_at = summary.size() - sizeof(std::uint32_t);
  const std::uint32_t summary_crc = crc32(std::span<const std::byte>(summary).first(crc_at));
  std::memcpy(summary.data() + crc_at, &summary_crc, sizeof summary_crc);
  summary.insert(summary.end(), kMagic.begin(), kMagic.end());
  write_raw(summary);

  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(name_, std::string("cannot close the file: ") + std::strerror(errno));
}

}  // namespace ferry::bag
