// string<=N and T[<=N] (docs/messages.md): layout equal to ferry::String /
// ferry::Vector, ROS 2's CDR (length-prefixed, used length only), bounds
// checked on decode (never truncated, never overread), fuzzed lengths,
// `include:` with its errors, and the shipped definitions.

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ferry/bounded.hpp"
#include "ferry/config/cdr.hpp"
#include "ferry/config/cpp_header.hpp"
#include "ferry/config/layout_fingerprint.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/msg_to_yaml.hpp"
#include "ferry/config/ros2msg.hpp"

using namespace ferry::config;

namespace {

struct Item {
  ferry::String<5> label;
  double value;
};
struct Msg {
  std::uint8_t flag;
  ferry::String<8> name;
  ferry::Vector<std::uint16_t, 3> counts;
  ferry::Vector<Item, 2> items;
  bool ok;
};

const char* kYaml = R"(
types:
  Item:
    fields:
      - { name: label, type: "string<=5" }
      - { name: value, type: f64 }
  Msg:
    ros2: test_msgs/msg/Msg
    fields:
      - { name: flag, type: u8 }
      - { name: name, type: "string<=8" }
      - { name: counts, type: "u16[<=3]" }
      - { name: items, type: "Item[<=2]" }
      - { name: ok, type: bool }
)";

std::vector<std::byte> bytes_of(const Msg& m) {
  std::vector<std::byte> out(sizeof m);
  std::memcpy(out.data(), &m, sizeof m);
  return out;
}

Msg sample() {
  Msg m{};
  m.flag = 7;
  CHECK(m.name.assign("map"));
  CHECK(m.counts.push_back(0x0102));
  Item it{};
  CHECK(it.label.assign("ab"));
  it.value = 1.5;
  CHECK(m.items.push_back(it));
  m.ok = true;
  return m;
}

// The CDR ROS 2 writes for sample(), by hand.
std::vector<std::uint8_t> expected_cdr() {
  return {0, 1, 0, 0,                        // header
          7, 0, 0, 0,                        // flag, pad
          4, 0, 0, 0, 'm', 'a', 'p',  0,     // name: 3 bytes + NUL
          1, 0, 0, 0, 2,   1,                // counts: 1 x u16
          0, 0,                              // pad to 4
          1, 0, 0, 0,                        // items: 1
          3, 0, 0, 0, 'a', 'b', 0,           // label
          0,                                 // pad to 8
          0, 0, 0, 0, 0,   0,   0xf8, 0x3f,  // value 1.5
          1};                                // ok
}

std::filesystem::path temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ferry_bounded_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("string<=N and T[<=N] are laid out as ferry::String and ferry::Vector") {
  const Config c = load_string(kYaml);
  const Type& msg = *c.schema.find("Msg");
  CHECK(msg.size == sizeof(Msg));
  CHECK(msg.align == alignof(Msg));
  CHECK(msg.fields[1].offset == offsetof(Msg, name));
  CHECK(msg.fields[2].offset == offsetof(Msg, counts));
  CHECK(msg.fields[3].offset == offsetof(Msg, items));
  CHECK(msg.fields[4].offset == offsetof(Msg, ok));
  CHECK(msg.variable);
  CHECK(msg.ros2 == "test_msgs/msg/Msg");
  CHECK(ros2_type_name(c.schema, *c.schema.index_of("Msg")) == "test_msgs/msg/Msg");
  const std::string def = ros2msg_definition(c.schema, *c.schema.index_of("Msg"));
  CHECK(def.starts_with(
      "uint8 flag\nstring name\nuint16[] counts\nferry/msg/Item[] items\nbool ok\n"));
  const auto fp = layout_fingerprint(c.schema, *c.schema.index_of("Msg"));
  REQUIRE(fp);
  CHECK(fp->find("name:string<=8@4") != std::string::npos);
  CHECK(fp->find("counts:u16[<=3]@16") != std::string::npos);
  // A different bound is a different layout.
  std::string other = kYaml;
  other.replace(other.find("string<=8"), 9, "string<=9");
  const Config c2 = load_string(other);
  CHECK(first_layout_difference(*layout_fingerprint(c2.schema, *c2.schema.index_of("Msg")), *fp));
  const auto header = generate_cpp_header(c.schema, "t.yaml", "t.yaml");
  REQUIRE(header);
  CHECK(header->find("::ferry::String<8> name;") != std::string::npos);
  CHECK(header->find("::ferry::Vector<Item, 2> items;") != std::string::npos);
  CHECK(header->find("#include <ferry/bounded.hpp>") != std::string::npos);
}

TEST_CASE("CDR of bounded fields is ROS 2's: length-prefixed, used length only") {
  const Config c = load_string(kYaml);
  const std::size_t t = *c.schema.index_of("Msg");
  const Msg m = sample();
  const auto in = bytes_of(m);
  std::vector<std::byte> cdr;
  cdr_encode(c.schema, t, in, cdr);
  const auto want = expected_cdr();
  REQUIRE(cdr.size() == want.size());
  CHECK(std::memcmp(cdr.data(), want.data(), want.size()) == 0);
  CHECK(cdr_size(c.schema, t, in) == want.size());
  Msg back{};
  cdr_decode(c.schema, t, cdr, std::as_writable_bytes(std::span(&back, 1)));
  CHECK(back.flag == 7);
  CHECK(back.name.view() == "map");
  REQUIRE(back.counts.size() == 1);
  CHECK(back.counts[0] == 0x0102);
  REQUIRE(back.items.size() == 1);
  CHECK(back.items[0].label.view() == "ab");
  CHECK(back.items[0].value == 1.5);
  CHECK(back.ok);
}

TEST_CASE("a length over the bound is refused with a sentence, never truncated") {
  const Config c = load_string(kYaml);
  const std::size_t t = *c.schema.index_of("Msg");
  std::vector<std::byte> cdr;
  cdr_encode(c.schema, t, bytes_of(sample()), cdr);
  Msg back{};
  const auto out = std::as_writable_bytes(std::span(&back, 1));
  // counts says 4 elements (bound 3).
  std::vector<std::byte> bad = cdr;
  bad[16] = std::byte{4};
  CHECK_THROWS_WITH_AS(cdr_decode(c.schema, t, bad, out),
                       "CDR sample of type 'Msg': sequence field 'counts' of type 'Msg' has "
                       "length 4 at offset 16, over its bound 3",
                       CdrError);
  // name says 10 bytes (bound 8, length counts the NUL).
  bad = cdr;
  bad[8] = std::byte{10};
  CHECK_THROWS_AS(cdr_decode(c.schema, t, bad, out), CdrError);
  // A string without its NUL.
  bad = cdr;
  bad[15] = std::byte{'x'};
  CHECK_THROWS_WITH_AS(cdr_decode(c.schema, t, bad, out),
                       "CDR sample of type 'Msg': string field 'name' of type 'Msg' lacks its "
                       "terminating NUL at offset 15",
                       CdrError);
  // A sample whose own length is over its bound (shared memory is not trusted).
  Msg m = sample();
  std::vector<std::byte> raw = bytes_of(m);
  const std::uint32_t huge = 1000;
  std::memcpy(raw.data() + offsetof(Msg, counts), &huge, sizeof huge);
  CHECK_THROWS_AS((void)cdr_size(c.schema, t, raw), CdrError);
  std::vector<std::byte> sink;
  CHECK_THROWS_AS(cdr_encode(c.schema, t, raw, sink), CdrError);
}

TEST_CASE("fuzzed lengths never read or write out of bounds") {
  const Config c = load_string(kYaml);
  const std::size_t t = *c.schema.index_of("Msg");
  std::vector<std::byte> cdr;
  cdr_encode(c.schema, t, bytes_of(sample()), cdr);
  const auto seed = std::random_device{}();
  std::printf("test_config_bounded: fuzz seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::size_t length_at[] = {8, 16, 24, 28};
  int refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::byte> bad = cdr;
    const std::size_t at = length_at[rng() % 4];
    std::uint32_t v =
        rng() % 3 == 0 ? static_cast<std::uint32_t>(rng()) : static_cast<std::uint32_t>(rng() % 12);
    std::memcpy(bad.data() + at, &v, sizeof v);
    if (rng() % 4 == 0) bad.resize(rng() % bad.size());
    if (rng() % 4 == 0) bad.resize(bad.size() + rng() % 64, std::byte{0});
    // The sample buffer sits in a vector of its exact size: ASan sees any overrun.
    std::vector<std::byte> out(sizeof(Msg));
    try {
      cdr_decode(c.schema, t, bad, out);
      Msg m;
      std::memcpy(&m, out.data(), sizeof m);
      CHECK(m.counts.size() <= 3);
    } catch (const CdrError&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("YAML bounded types: errors name the file, line and column") {
  const auto errors = check_string(
      "types:\n  T:\n    fields:\n      - { name: a, type: string }\n"
      "      - { name: b, type: \"u8[<=0]\" }\n      - { name: c, type: \"string[<=4]\" }\n"
      "    ros2: not_a_name\n",
      "t.yaml");
  REQUIRE(errors.size() == 4);
  std::string all;
  for (const auto& e : errors) all += e.to_string() + "\n";
  CHECK(all.find("t.yaml:4:26: field type 'string' needs a bound") != std::string::npos);
  CHECK(all.find("t.yaml:5:26: length 0 in 'u8[<=0]'") != std::string::npos);
  CHECK(all.find("t.yaml:6:26: a sequence of strings") != std::string::npos);
  CHECK(all.find("t.yaml:7:11: invalid ROS 2 name 'not_a_name'") != std::string::npos);
}

TEST_CASE("include: next to the file, once each; cycles and clashes with file:line:col") {
  const auto dir = temp_dir();
  write(dir / "a.yaml", "include: [b.yaml]\ntypes:\n  A: { fields: [{ name: x, type: B }] }\n");
  write(dir / "b.yaml", "types:\n  B: { fields: [{ name: y, type: u8 }] }\n");
  write(dir / "main.yaml", "include: [a.yaml, b.yaml]\ntopics:\n  - { name: t, type: A }\n");
  const Config c = load_file(dir / "main.yaml");
  CHECK(c.schema.find("A") != nullptr);
  CHECK(c.included_files.size() == 2);
  // Served to clients with the included types written in.
  const std::string flat =
      self_contained_text(c, "include: [a.yaml, b.yaml]\ntopics:\n  - { name: t, type: A }\n");
  const Config again = load_string(flat);
  CHECK(again.schema.find("B") != nullptr);
  CHECK(again.find_topic("t") != nullptr);

  write(dir / "c1.yaml", "include: [c2.yaml]\ntypes: {}\n");
  write(dir / "c2.yaml", "include: [c1.yaml]\ntypes: {}\n");
  write(dir / "cycle.yaml", "include: [c1.yaml]\n");
  auto errors = check_file(dir / "cycle.yaml");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].file == (dir / "c2.yaml").string());
  CHECK(errors[0].line == 1);
  CHECK(errors[0].column == 11);
  CHECK(errors[0].message.starts_with("include cycle: "));

  write(dir / "clash.yaml",
        "include: [b.yaml]\ntypes:\n  B: { fields: [{ name: z, type: u8 }] }\n");
  errors = check_file(dir / "clash.yaml");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].to_string() == (dir / "clash.yaml").string() +
                                     ":3:3: duplicate type 'B'; first declared at " +
                                     (dir / "b.yaml").string() + ":2:3");

  write(dir / "missing.yaml", "include: [nothere.yaml]\n");
  errors = check_file(dir / "missing.yaml");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 1);
  CHECK(errors[0].message.starts_with("included file 'nothere.yaml' was not found"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the shipped definitions load and Image fits a 4K RGB frame") {
  const Config c = load_string(
      "include: [sensor_msgs.yaml]\n"
      "pool: [{ chunk_size: 32MiB, count: 4 }]\n"
      "topics:\n  - { name: camera/image, type: sensor_msgs/msg/Image, capacity: 2 }\n",
      "<string>");
  const Type* image = c.schema.find("sensor_msgs/msg/Image");
  REQUIRE(image != nullptr);
  CHECK(image->fields.back().count == 3840u * 2160u * 3u);
  for (const char* name :
       {"builtin_interfaces/msg/Time", "builtin_interfaces/msg/Duration", "std_msgs/msg/Header",
        "geometry_msgs/msg/Point", "geometry_msgs/msg/Vector3", "geometry_msgs/msg/Quaternion",
        "geometry_msgs/msg/Pose", "geometry_msgs/msg/PoseStamped", "geometry_msgs/msg/Twist",
        "geometry_msgs/msg/Transform", "geometry_msgs/msg/TransformStamped",
        "sensor_msgs/msg/CompressedImage", "sensor_msgs/msg/Imu", "sensor_msgs/msg/LaserScan",
        "sensor_msgs/msg/PointField", "sensor_msgs/msg/PointCloud2", "sensor_msgs/msg/CameraInfo"})
    CHECK_MESSAGE(c.schema.find(name) != nullptr, name);
  const auto header = generate_cpp_header(c.schema, "sensor_msgs.yaml", "sensor_msgs.yaml");
  REQUIRE(header);
  CHECK(header->find("namespace sensor_msgs {\nnamespace msg {") != std::string::npos);
}

TEST_CASE("ferry gen yaml: ROS 2 .msg files become ferry types") {
  const std::vector<MsgFile> files = {{"my_pkg/msg/Detection.msg",
                                       "# A detection\n"
                                       "uint8 KIND_CAR=1   # a constant: not a field\n"
                                       "std_msgs/Header header\n"
                                       "string label\n"
                                       "string<=16 short_label\n"
                                       "float64[] scores\n"
                                       "float32[4] box\n"
                                       "int32[<=8] ids\n"
                                       "Point2 centre\n"
                                       "byte flags 0  # a default\n"},
                                      {"my_pkg/msg/Point2.msg", "float64 x\nfloat64 y\n"}};
  const auto yaml = msg_to_yaml(files, {.max_string = 64, .max_sequence = 100});
  REQUIRE(yaml);
  CHECK(yaml->starts_with("include: [std_msgs.yaml]\ntypes:\n  my_pkg/msg/Detection:\n"));
  CHECK(yaml->find("{ name: label, type: \"string<=64\" }") != std::string::npos);
  CHECK(yaml->find("{ name: scores, type: \"f64[<=100]\" }") != std::string::npos);
  CHECK(yaml->find("{ name: centre, type: \"my_pkg/msg/Point2\" }") != std::string::npos);
  const Config c = load_string(*yaml, "<gen yaml>");
  const Type* d = c.schema.find("my_pkg/msg/Detection");
  REQUIRE(d != nullptr);
  REQUIRE(d->fields.size() == 8);
  CHECK(d->fields[2].type_text == "string<=16");
  CHECK(d->fields[4].type_text == "f32[4]");
  CHECK(d->fields[5].type_text == "i32[<=8]");
  CHECK(d->fields[7].type_text == "u8");
  CHECK(ros2msg_definition(c.schema, *c.schema.index_of("my_pkg/msg/Detection"))
            .starts_with("std_msgs/msg/Header header\nstring label\nstring short_label\n"
                         "float64[] scores\nfloat32[4] box\nint32[] ids\n"));

  const auto bad = msg_to_yaml({{"p/msg/Bad.msg", "uint8 ok\n  string[] names\n"}}, {});
  REQUIRE_FALSE(bad);
  REQUIRE(bad.error().size() == 1);
  CHECK(bad.error()[0].to_string().starts_with(
      "p/msg/Bad.msg:2:3: an array of strings ('string[]') has no ferry form"));
}
