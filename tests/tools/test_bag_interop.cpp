// Files written by tools/bag's McapWriter, read by the reference MCAP reader
// (@mcap/core under Node.js, tests/tools/mcap_reader/read.js) with each
// compression: CRCs, schemas, channels, counts, order and bytes.

#include <doctest/doctest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "bag_test_util.hpp"
#include "daemon_fixture.hpp"
#include "hex.hpp"
#include "json_text.hpp"
#include "record_test_util.hpp"
#include "test_domain.hpp"

using namespace ferry::bag;

namespace {

using ferry::test::hex;

nlohmann::json read_with_reference(const ferry::test::TestDomain& domain,
                                   const std::filesystem::path& file,
                                   const std::string& flag = "") {
  std::vector<std::string> argv = {FERRY_NODE, std::string(FERRY_MCAP_READER_DIR) + "/read.js",
                                   file.string()};
  if (!flag.empty()) argv.push_back(flag);
  const auto r = ferry::test::run_program(domain, argv);
  INFO("read.js stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return ferry::test::parse_json(r.out);
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
    CHECK(pose["first_message"] == nlohmann::json{{"id", 7}, {"x", 0.25}, {"ok", true}});
    const auto& log = j["topics"][1];
    CHECK(log["topic"] == "log");
    CHECK(log["schema_name"] == "ferry/msg/Bytes");
    CHECK(log["schema_text"] == "uint8[] data\n");
    CHECK(log["count"] == kCount);
    CHECK(log["first_message_hex"] == hex(bag_test::log_cdr(0)));
    CHECK(log["first_message"]["data"] == nlohmann::json::array({'l', 'i', 'n', 'e', ' ', '0'}));
    std::vector<std::uint32_t> expected(kCount);
    for (std::uint32_t i = 0; i < kCount; ++i) expected[i] = i;
    CHECK(pose["sequences"].get<std::vector<std::uint32_t>>() == expected);
    CHECK(log["sequences"].get<std::vector<std::uint32_t>>() == expected);
  }
}

namespace {

struct Point {
  double x;
  char tag[3];
};
struct All {
  bool b;
  std::int8_t i8v;
  std::int16_t i16v;
  std::int32_t i32v;
  std::int64_t i64v;
  std::uint8_t u8v;
  std::uint16_t u16v;
  std::uint32_t u32v;
  std::uint64_t u64v;
  float f32v;
  double f64v;
  char name[6];
  std::int32_t arr[3];
  Point point;
  Point points[2];
  std::uint8_t blob[5];
};

const char* const kAllYaml = R"(
types:
  geo/Point:
    fields:
      - { name: x, type: f64 }
      - { name: tag, type: "char[3]" }
  Blob: { size: 5 }
  demo/All:
    fields:
      - { name: b, type: bool }
      - { name: i8v, type: i8 }
      - { name: i16v, type: i16 }
      - { name: i32v, type: i32 }
      - { name: i64v, type: i64 }
      - { name: u8v, type: u8 }
      - { name: u16v, type: u16 }
      - { name: u32v, type: u32 }
      - { name: u64v, type: u64 }
      - { name: f32v, type: f32 }
      - { name: f64v, type: f64 }
      - { name: name, type: "char[6]" }
      - { name: arr, type: "i32[3]" }
      - { name: point, type: geo/Point }
      - { name: points, type: "geo/Point[2]" }
      - { name: blob, type: Blob }
topics:
  - { name: all, type: demo/All }
)";

}  // namespace

TEST_CASE("the reference ROS 2 decoder reads every field type from our schema and CDR") {
  ferry::test::TestDomain domain;
  bag_test::TempDir dir("bag-interop-all");
  const auto config = ferry::config::load_string(kAllYaml);
  const std::size_t type = *config.schema.index_of("demo/All");
  REQUIRE(config.schema.type(type).size == sizeof(All));

  All a;
  std::memset(&a, 0, sizeof a);
  a.b = true;
  a.i8v = -5;
  a.i16v = -300;
  a.i32v = -70000;
  a.i64v = -5000000000;
  a.u8v = 200;
  a.u16v = 60000;
  a.u32v = 4000000000u;
  a.u64v = 18000000000000000000ull;
  a.f32v = 1.5f;
  a.f64v = -2.25;
  std::memcpy(a.name, "hello", 6);
  a.arr[0] = 1;
  a.arr[1] = -2;
  a.arr[2] = 3;
  a.point = {3.5, {'a', 'b', 'c'}};
  a.points[0] = {1.0, {'x', 'y', 0}};
  a.points[1] = {2.0, {'z', 0, 0}};
  for (std::uint8_t i = 0; i < 5; ++i) a.blob[i] = static_cast<std::uint8_t>(i + 1);

  const auto path = dir / "all.mcap";
  {
    McapWriter writer(path, WriterOptions{.compression = Compression::Zstd});
    const std::string msg = ferry::config::ros2msg_definition(config.schema, type);
    const auto schema = writer.add_schema(ferry::config::ros2_type_name("demo/All"), "ros2msg",
                                          std::as_bytes(std::span(msg)));
    const auto channel = writer.add_channel(schema, "all", "cdr");
    std::vector<std::byte> cdr;
    ferry::config::cdr_encode(config.schema, type, std::as_bytes(std::span(&a, 1)), cdr);
    writer.write_message({channel, 0, 1, 1}, cdr);
    writer.close();
  }
  const nlohmann::json j = read_with_reference(domain, path);
  REQUIRE(j["topics"].size() == 1);
  CHECK(j["topics"][0]["schema_name"] == "demo/msg/All");
  using J = nlohmann::json;
  const J point = {{"x", 3.5}, {"tag", {'a', 'b', 'c'}}};
  const J points =
      J::array({J{{"x", 1.0}, {"tag", {'x', 'y', 0}}}, J{{"x", 2.0}, {"tag", {'z', 0, 0}}}});
  const J expected = {{"b", true},
                      {"i8v", -5},
                      {"i16v", -300},
                      {"i32v", -70000},
                      {"i64v", "-5000000000"},
                      {"u8v", 200},
                      {"u16v", 60000},
                      {"u32v", 4000000000u},
                      {"u64v", "18000000000000000000"},
                      {"f32v", 1.5},
                      {"f64v", -2.25},
                      {"name", {'h', 'e', 'l', 'l', 'o', 0}},
                      {"arr", {1, -2, 3}},
                      {"point", point},
                      {"points", points},
                      {"blob", {1, 2, 3, 4, 5}}};
  CHECK(j["topics"][0]["first_message"] == expected);
}

namespace {

// A char[N] as the reference decoder shows it: uint8[N].
nlohmann::json chars(const char* text, std::size_t n) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<unsigned char>(text[i]));
  return out;
}

nlohmann::json expected_fields(const record_test::All& a) {
  using J = nlohmann::json;
  const auto inner = [](const record_test::Inner& in) {
    return J{{"flag", in.flag}, {"label", chars(in.label, 8)}, {"value", in.value}};
  };
  return J{{"b", a.b},
           {"i8", a.i8},
           {"i16", a.i16},
           {"i32", a.i32},
           {"i64", std::to_string(a.i64)},
           {"u8", a.u8},
           {"u16", a.u16},
           {"u32", a.u32},
           {"u64", std::to_string(a.u64)},
           {"f32", a.f32},
           {"f64", a.f64},
           {"name", chars(a.name, 16)},
           {"arr", {a.arr[0], a.arr[1], a.arr[2]}},
           {"inner", inner(a.inner)},
           {"inners", J::array({inner(a.inners[0]), inner(a.inners[1])})}};
}

}  // namespace

TEST_CASE("the reference reader decodes what ferry record wrote, every message field by field") {
  ferry::test::TestDomain domain;
  ferry::test::Daemon daemon(domain, record_test::config_yaml());
  ferry::test::use_domain_env(domain);
  bag_test::TempDir dir("bag-interop-record");
  const auto file = dir / "all.mcap";
  constexpr std::uint32_t kCount = 20;
  ferry::test::Child publisher([] {
    ferry::Node node{"all-pub"};
    auto pub = node.publisher<record_test::All>("all");
    (void)pub.wait_for_subscribers(1, std::chrono::seconds(5));
    for (std::uint32_t i = 0; i < kCount; ++i)
      if (pub.publish(record_test::make_all(i)).delivered != 1) return 1;
    return 0;
  });
  const auto r = ferry::test::run_program(
      domain,
      {ferry::test::bin_path("ferry"), "record", "all", "-o", file.string(), "--count",
       std::to_string(kCount), "--compression", "zstd"},
      std::chrono::seconds(10));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(publisher.wait() == 0);

  const nlohmann::json j = read_with_reference(domain, file, "--decode-all");
  CHECK(j["data_section_crc_ok"] == true);
  REQUIRE(j["topics"].size() == 1);
  const auto& topic = j["topics"][0];
  CHECK(topic["topic"] == "all");
  CHECK(topic["schema_name"] == "ferry/msg/All");
  CHECK(topic["metadata"] ==
        nlohmann::json{{"ferry_type", "All"}, {"policy", "block"}, {"capacity", "64"}});
  REQUIRE(topic["messages"].size() == kCount);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    CAPTURE(i);
    CHECK(topic["messages"][i] == expected_fields(record_test::make_all(i)));
  }
}
