// tools/bag: McapWriter's files read back by McapReader with every
// compression; byte layout of the start and end; files cut short (a
// recorder killed with kill -9) and hostile files.

#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "bag_test_util.hpp"
#include "ferry/bag/bag_error.hpp"
#include "ferry/bag/compression.hpp"
#include "ferry/bag/mcap_reader.hpp"

using namespace ferry::bag;
using bag_test::TempDir;

namespace {

struct Seen {
  std::string topic;
  MessageHeader header;
  std::vector<std::byte> data;
};

std::vector<Seen> read_messages(const McapReader& reader) {
  std::vector<Seen> out;
  reader.for_each_message([&](const MessageView& m) {
    out.push_back({m.channel->topic, m.header, {m.data.begin(), m.data.end()}});
    return true;
  });
  return out;
}

void check_messages(const std::vector<Seen>& seen, std::uint32_t pairs) {
  REQUIRE(seen.size() == 2 * pairs);
  for (std::uint32_t i = 0; i < pairs; ++i) {
    CAPTURE(i);
    CHECK(seen[2 * i].topic == "pose");
    CHECK(seen[2 * i].header.sequence == i);
    CHECK(seen[2 * i].header.log_time == 1000 + 2ull * i);
    CHECK(seen[2 * i].header.publish_time == 900 + 2ull * i);
    CHECK(seen[2 * i].data == bag_test::pose_cdr(i));
    CHECK(seen[2 * i + 1].topic == "log");
    CHECK(seen[2 * i + 1].data == bag_test::log_cdr(i));
  }
}

}  // namespace

TEST_CASE("crc32_append gives the CRC of two ranges without reading the second again") {
  std::vector<std::byte> bytes(10000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 31 % 251);
  const std::span<const std::byte> all(bytes);
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, bytes.size()}) {
    CAPTURE(cut);
    const auto a = all.first(cut);
    const auto b = all.subspan(cut);
    CHECK(crc32_append(crc32(a), crc32(b), b.size()) == crc32(all));
  }
}

TEST_CASE("mcap: written with each compression, read back whole, CRCs checked") {
  TempDir dir("bag-mcap");
  for (const Compression c : {Compression::None, Compression::Lz4, Compression::Zstd}) {
    CAPTURE(option_name(c));
    const auto path = dir / ("rec-" + std::string(option_name(c)) + ".mcap");
    // Small chunks: several chunks, each with two message indexes.
    bag_test::write_recording(path, WriterOptions{.compression = c, .chunk_size = 512}, 100);
    const McapReader reader(path);
    const BagSummary& s = reader.summary();
    CHECK(s.has_summary);
    CHECK(!s.truncated_at);
    CHECK(s.header.profile == "ros2");
    CHECK(s.header.library == "ferry");
    REQUIRE(s.schemas.size() == 2);
    CHECK(s.schemas.at(1).name == "geo/msg/Pose");
    CHECK(s.schemas.at(1).encoding == "ros2msg");
    CHECK(s.schemas.at(2).name == "ferry/msg/Bytes");
    REQUIRE(s.channels.size() == 2);
    CHECK(s.channels.at(1).topic == "pose");
    CHECK(s.channels.at(1).message_encoding == "cdr");
    CHECK(s.channels.at(1).metadata ==
          StringMap{{"ferry_type", "geo/Pose"}, {"policy", "drop_oldest"}});
    CHECK(s.statistics.message_count == 200);
    CHECK(s.statistics.message_start_time == 1000);
    CHECK(s.statistics.message_end_time == 1000 + 2 * 99 + 1);
    CHECK(s.statistics.channel_message_counts ==
          std::vector<std::pair<std::uint16_t, std::uint64_t>>{{1, 100}, {2, 100}});
    CHECK(s.statistics.metadata_count == 1);
    CHECK(s.chunk_indexes.size() > 3);
    // Uncompressed, each message written from where it lies has its own chunk.
    if (c == Compression::None) CHECK(s.chunk_indexes.size() >= 50);
    CHECK(s.statistics.chunk_count == s.chunk_indexes.size());
    CHECK(s.chunk_indexes.front().compression == mcap_name(c));
    CHECK(s.metadata_indexes.size() == 1);
    check_messages(read_messages(reader), 100);
    CHECK_NOTHROW(reader.verify());
    const auto metadata = reader.metadata();
    REQUIRE(metadata.size() == 1);
    CHECK(metadata[0].name == "ferry.record");
  }
}

TEST_CASE("mcap: the file starts with magic and Header and ends with Footer and magic") {
  TempDir dir("bag-layout");
  const auto path = dir / "rec.mcap";
  bag_test::write_recording(path, {}, 3);
  const auto bytes = bag_test::read_all(path);
  REQUIRE(bytes.size() > 64);
  CHECK(std::memcmp(bytes.data(), "\x89MCAP0\r\n", 8) == 0);
  CHECK(bytes[8] == std::byte{0x01});  // Header
  // Header content: "ros2", "ferry" with u32 lengths.
  std::uint64_t header_length = 0;
  std::memcpy(&header_length, bytes.data() + 9, 8);
  CHECK(header_length == 4 + 4 + 4 + 5);
  CHECK(std::memcmp(bytes.data() + bytes.size() - 8, "\x89MCAP0\r\n", 8) == 0);
  const std::size_t footer = bytes.size() - 8 - 29;
  CHECK(bytes[footer] == std::byte{0x02});
  std::uint64_t footer_length = 0;
  std::memcpy(&footer_length, bytes.data() + footer + 1, 8);
  CHECK(footer_length == 20);
}

TEST_CASE("mcap: a file cut short still yields every complete chunk") {
  TempDir dir("bag-cut");
  const auto path = dir / "rec.mcap";
  bag_test::write_recording(
      path, WriterOptions{.compression = Compression::Zstd, .chunk_size = 512}, 100);
  const McapReader whole(path);
  const auto& chunks = whole.summary().chunk_indexes;
  REQUIRE(chunks.size() > 3);
  const auto bytes = bag_test::read_all(path);
  // Cut in the middle of the third chunk, as kill -9 during its write would.
  const std::uint64_t cut = chunks[2].chunk_start_offset + chunks[2].chunk_length / 2;
  const auto cut_path = dir / "cut.mcap";
  bag_test::write_all(cut_path, std::vector<std::byte>(bytes.begin(), bytes.begin() + cut));
  const McapReader reader(cut_path);
  CHECK(!reader.summary().has_summary);
  CHECK(reader.summary().truncated_at == chunks[2].chunk_start_offset);
  CHECK(reader.summary().schemas.size() == 2);
  CHECK(reader.summary().channels.size() == 2);
  const auto seen = read_messages(reader);
  CHECK(reader.summary().statistics.message_count == seen.size());
  CHECK(reader.summary().statistics.chunk_count == 2);
  REQUIRE(seen.size() % 2 == 0);
  REQUIRE(!seen.empty());
  check_messages(seen, static_cast<std::uint32_t>(seen.size() / 2));
  CHECK_THROWS_WITH_AS(
      reader.verify(),
      (cut_path.string() + ": at offset " + std::to_string(chunks[2].chunk_start_offset) +
       ": the file is cut short: this record is incomplete and there is no "
       "summary")
          .c_str(),
      BagError);

  // Every cut: opened (maybe with nothing in it) or refused, never a crash.
  const std::uint64_t step = bytes.size() / 300 + 1;  // about 300 cuts
  for (std::uint64_t n = 0; n < bytes.size(); n += step) {
    bag_test::write_all(cut_path, std::vector<std::byte>(bytes.begin(), bytes.begin() + n));
    try {
      const McapReader r(cut_path);
      (void)read_messages(r);
    } catch (const BagError&) {
    }
  }
}

TEST_CASE("mcap: hostile files get one sentence naming the file and the offset") {
  TempDir dir("bag-hostile");
  const auto path = dir / "rec.mcap";
  bag_test::write_recording(path, WriterOptions{.compression = Compression::Lz4, .chunk_size = 512},
                            20);
  const auto good = bag_test::read_all(path);
  const McapReader reference(path);
  const ChunkIndexRecord chunk = reference.summary().chunk_indexes.front();
  const auto bad = dir / "bad.mcap";
  const std::string name = bad.string();

  bag_test::write_all(bad, {});
  CHECK_THROWS_WITH_AS(McapReader{bad},
                       (name + ": at offset 0: is not an MCAP file: 0 bytes, fewer than the "
                               "8-byte magic")
                           .c_str(),
                       BagError);
  bag_test::write_all(bad, std::vector<std::byte>(100, std::byte{'x'}));
  CHECK_THROWS_WITH_AS(
      McapReader{bad},
      (name + ": at offset 0: is not an MCAP file: no MCAP magic at the start").c_str(), BagError);
  CHECK_THROWS_AS(McapReader{dir / "missing.mcap"}, BagError);

  // A byte of the first chunk's compressed records changed: lz4 or the CRC says so.
  auto corrupt = good;
  corrupt[chunk.chunk_start_offset + chunk.chunk_length - 5] ^= std::byte{0x40};
  bag_test::write_all(bad, corrupt);
  {
    const McapReader r(bad);  // the summary is intact
    CHECK_THROWS_AS(read_messages(r), BagError);
  }

  // An unknown compression: the chunk's "lz4" becomes "lz5".
  corrupt = good;
  const std::uint64_t compression_at = chunk.chunk_start_offset + 9 + 8 + 8 + 8 + 4 + 4;
  REQUIRE(std::memcmp(corrupt.data() + compression_at, "lz4", 3) == 0);
  corrupt[compression_at + 2] = std::byte{'5'};
  bag_test::write_all(bad, corrupt);
  {
    const McapReader r(bad);
    CHECK_THROWS_WITH_AS(read_messages(r),
                         (name + ": at offset " + std::to_string(chunk.chunk_start_offset) +
                          ": the chunk's compression 'lz5' is unknown; expected none, lz4 or zstd")
                             .c_str(),
                         BagError);
  }

  // A summary byte changed: the summary CRC.
  corrupt = good;
  corrupt[corrupt.size() - 8 - 29 - 30] ^= std::byte{1};
  bag_test::write_all(bad, corrupt);
  CHECK_THROWS_WITH_AS(McapReader{bad}, doctest::Contains("the summary's CRC is"), BagError);

  // A data section byte changed outside any chunk's records (the Header's
  // library name): only the data section CRC sees it.
  corrupt = good;
  corrupt[8 + 9 + 4 + 4 + 4] ^= std::byte{1};
  bag_test::write_all(bad, corrupt);
  {
    const McapReader r(bad);
    CHECK_THROWS_WITH_AS(r.verify(), doctest::Contains("the data section's CRC is"), BagError);
  }
}

TEST_CASE("mcap: random damage is read or refused, never a crash (bounded fuzz)") {
  TempDir dir("bag-fuzz");
  const auto path = dir / "rec.mcap";
  bag_test::write_recording(path,
                            WriterOptions{.compression = Compression::Zstd, .chunk_size = 256}, 30);
  const auto good = bag_test::read_all(path);
  std::mt19937 rng(1510);
  const auto bad = dir / "fuzz.mcap";
  int refused = 0;
  for (int round = 0; round < 400; ++round) {
    auto bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<std::byte>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    bag_test::write_all(bad, bytes);
    try {
      const McapReader r(bad);
      (void)read_messages(r);
      (void)r.metadata();
      r.verify();
    } catch (const BagError&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
}
