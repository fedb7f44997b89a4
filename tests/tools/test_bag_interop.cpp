// Files written by tools/bag's McapWriter, read by the reference MCAP reader
// (@mcap/core under Node.js, tests/tools/mcap_reader/read.js) with each
// compression: CRCs, schemas, channels, counts, order and bytes.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "bag_test_util.hpp"
#include "daemon_fixture.hpp"
#include "test_domain.hpp"

using namespace ferry::bag;

namespace {

std::string hex(const std::vector<std::byte>& bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (const std::byte b : bytes) {
    out += kDigits[std::to_integer<unsigned>(b) >> 4];
    out += kDigits[std::to_integer<unsigned>(b) & 15];
  }
  return out;
}

nlohmann::json read_with_reference(const ferry::test::TestDomain& domain,
                                   const std::filesystem::path& file) {
  const auto r = ferry::test::run_program(
      domain, {FERRY_NODE, std::string(FERRY_MCAP_READER_DIR) + "/read.js", file.string()});
  INFO("read.js stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("the reference MCAP reader reads our files with every compression") {
  ferry::test::TestDomain domain;
  bag_test::TempDir dir("bag-interop");
  const auto config = ferry::config::load_string(bag_test::kTypesYaml);
  const std::string pose_msg =
      ferry::config::ros2msg_definition(config.schema, *config.schema.index_of("geo/Pose"));
  constexpr std::uint32_t kCount = 300;
  for (const Compression c : {Compression::None, Compression::Lz4, Compression::Zstd}) {
    CAPTURE(option_name(c));
    const auto path = dir / ("rec-" + std::string(option_name(c)) + ".mcap");
    bag_test::write_recording(path, WriterOptions{.compression = c, .chunk_size = 2048}, kCount);
    const nlohmann::json j = read_with_reference(domain, path);
    CHECK(j["profile"] == "ros2");
    CHECK(j["library"] == "ferry");
    CHECK(j["message_count"] == 2 * kCount);
    CHECK(j["statistics_message_count"] == 2 * kCount);
    CHECK(j["chunk_count"].get<int>() > 1);
    CHECK(j["compressions"] == nlohmann::json::array({std::string(mcap_name(c))}));
    CHECK(j["data_section_crc_ok"] == true);
    REQUIRE(j["topics"].size() == 2);
    const auto& pose = j["topics"][0];
    CHECK(pose["topic"] == "pose");
    CHECK(pose["message_encoding"] == "cdr");
    CHECK(pose["schema_name"] == "geo/msg/Pose");
    CHECK(pose["schema_encoding"] == "ros2msg");
    CHECK(pose["schema_text"] == pose_msg);
    CHECK(pose["metadata"]["ferry_type"] == "geo/Pose");
    CHECK(pose["count"] == kCount);
    CHECK(pose["first_message_hex"] == hex(bag_test::pose_cdr(0)));
    const auto& log = j["topics"][1];
    CHECK(log["topic"] == "log");
    CHECK(log["schema_name"] == "ferry/msg/Bytes");
    CHECK(log["schema_text"] == "uint8[] data\n");
    CHECK(log["count"] == kCount);
    CHECK(log["first_message_hex"] == hex(bag_test::log_cdr(0)));
    std::vector<std::uint32_t> expected(kCount);
    for (std::uint32_t i = 0; i < kCount; ++i) expected[i] = i;
    CHECK(pose["sequences"].get<std::vector<std::uint32_t>>() == expected);
    CHECK(log["sequences"].get<std::vector<std::uint32_t>>() == expected);
  }
}
