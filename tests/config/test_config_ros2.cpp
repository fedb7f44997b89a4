// The ROS 2 mapping of a ferry type (docs/record-replay.md): schema names, .msg text and
// CDR bytes, checked against byte vectors computed by hand.

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ferry/config/cdr.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/ros2msg.hpp"

using namespace ferry::config;

namespace {

struct Point {
  double x;
  bool ok;
};
// C: flag 0, value 4, tag 8, level 12, p 16 (Point is 16 with tail padding),
// counts 32, blob 38, size 48.
struct Reading {
  bool flag;
  std::uint32_t value;
  char tag[3];
  std::int16_t level;
  Point p;
  std::uint16_t counts[3];
  std::uint8_t blob[3];
};
static_assert(sizeof(Reading) == 48 && offsetof(Reading, counts) == 32);

struct Path {
  std::uint8_t n;
  Point pts[2];
};
static_assert(sizeof(Path) == 40);

const char* const kYaml = R"(
types:
  geo/Point:
    fields:
      - { name: x, type: f64 }
      - { name: ok, type: bool }
  Blob: { size: 3 }
  Reading:
    fields:
      - { name: flag, type: bool }
      - { name: value, type: u32 }
      - { name: tag, type: "char[3]" }
      - { name: level, type: i16 }
      - { name: p, type: geo/Point }
      - { name: counts, type: "u16[3]" }
      - { name: blob, type: Blob }
  Path:
    fields:
      - { name: n, type: u8 }
      - { name: pts, type: "geo/Point[2]" }
topics:
  - { name: r, type: Reading }
)";

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

template <typename T>
std::span<const std::byte> as_bytes(const T& value) {
  return std::as_bytes(std::span(&value, 1));
}

Reading sample_reading() {
  Reading r;
  std::memset(&r, 0, sizeof r);  // padding zero, so a round trip compares equal
  r.flag = true;
  r.value = 0x11223344;
  std::memcpy(r.tag, "abc", 3);
  r.level = -2;
  r.p.x = 1.0;
  r.p.ok = true;
  r.counts[0] = 1;
  r.counts[1] = 2;
  r.counts[2] = 0x0304;
  r.blob[0] = 0xAA;
  r.blob[1] = 0xBB;
  r.blob[2] = 0xCC;
  return r;
}

// Payload offsets: flag 0, value 4, tag 8, level 12, p.x 16, p.ok 24,
// counts 26 (no tail padding after a nested type), blob 32; 35 bytes.
const std::vector<std::byte> kReadingCdr = bytes({
    0x00, 0x01, 0x00, 0x00,                          // encapsulation: CDR_LE
    0x01, 0x00, 0x00, 0x00,                          // flag, pad to 4
    0x44, 0x33, 0x22, 0x11,                          // value
    0x61, 0x62, 0x63, 0x00,                          // tag, pad to 2
    0xFE, 0xFF, 0x00, 0x00,                          // level, pad to 8
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F,  // p.x = 1.0
    0x01, 0x00,                                      // p.ok, pad to 2
    0x01, 0x00, 0x02, 0x00, 0x04, 0x03,              // counts
    0xAA, 0xBB, 0xCC,                                // blob (opaque: raw bytes)
});

struct Fixture {
  Config config = load_string(kYaml);
  std::size_t reading = *config.schema.index_of("Reading");
  std::size_t path = *config.schema.index_of("Path");
  std::size_t point = *config.schema.index_of("geo/Point");
};

// `sample` of `type` encodes to exactly `cdr`, and `cdr` decodes back to
// the sample's bytes, padding included (decode zeroes it).
template <class T>
void check_round_trip(const Fixture& f, std::size_t type, const T& sample,
                      const std::vector<std::byte>& cdr) {
  std::vector<std::byte> out;
  cdr_encode(f.config.schema, type, as_bytes(sample), out);
  CHECK(out == cdr);
  T back;
  std::memset(&back, 0x5A, sizeof back);
  cdr_decode(f.config.schema, type, cdr, std::as_writable_bytes(std::span(&back, 1)));
  CHECK(std::memcmp(&back, &sample, sizeof sample) == 0);
}

}  // namespace

TEST_CASE("ros2 schema names: pkg/Name -> pkg/msg/Name, a bare Name -> ferry/msg/Name") {
  CHECK(ros2_type_name("geometry_msgs/Pose") == "geometry_msgs/msg/Pose");
  CHECK(ros2_type_name("Pose") == "ferry/msg/Pose");
  CHECK(ros2_type_name("geometry_msgs/msg/Pose") == "geometry_msgs/msg/Pose");
  CHECK(ros2_bytes_type_name() == "ferry/msg/Bytes");
}

TEST_CASE("ros2msg: fields mapped by docs/record-replay.md, each nested type once after 80 '='") {
  Fixture f;
  const std::string sep(80, '=');
  CHECK(ros2msg_definition(f.config.schema, f.reading) ==
        "bool flag\n"
        "uint32 value\n"
        "uint8[3] tag\n"
        "int16 level\n"
        "geo/msg/Point p\n"
        "uint16[3] counts\n"
        "uint8[3] blob\n" +
            sep + "\nMSG: geo/msg/Point\nfloat64 x\nbool ok\n");
  CHECK(ros2msg_definition(f.config.schema, f.path) ==
        "uint8 n\ngeo/msg/Point[2] pts\n" + sep + "\nMSG: geo/msg/Point\nfloat64 x\nbool ok\n");
  CHECK(ros2msg_definition(f.config.schema, *f.config.schema.index_of("Blob")) ==
        "uint8[3] data\n");
  CHECK(ros2msg_bytes_definition() == "uint8[] data\n");
}

TEST_CASE("ros2msg: every scalar type and a type used twice is defined once") {
  const Config config = load_string(R"(
types:
  In: { fields: [ { name: v, type: u8 } ] }
  All:
    fields:
      - { name: a, type: bool }
      - { name: b, type: i8 }
      - { name: c, type: i16 }
      - { name: d, type: i32 }
      - { name: e, type: i64 }
      - { name: f, type: u8 }
      - { name: g, type: u16 }
      - { name: h, type: u32 }
      - { name: i, type: u64 }
      - { name: j, type: f32 }
      - { name: k, type: "f64[2]" }
      - { name: l, type: In }
      - { name: m, type: "In[3]" }
topics: []
)");
  CHECK(ros2msg_definition(config.schema, *config.schema.index_of("All")) ==
        "bool a\nint8 b\nint16 c\nint32 d\nint64 e\nuint8 f\nuint16 g\nuint32 h\nuint64 i\n"
        "float32 j\nfloat64[2] k\nferry/msg/In l\nferry/msg/In[3] m\n" +
            std::string(80, '=') + "\nMSG: ferry/msg/In\nuint8 v\n");
}

TEST_CASE("cdr: a type with padding, nested, arrays, char[N], bool and opaque, by hand") {
  Fixture f;
  const Reading r = sample_reading();
  CHECK(cdr_size(f.config.schema, f.reading) == kReadingCdr.size());
  check_round_trip(f, f.reading, r, kReadingCdr);
}

TEST_CASE("cdr: an array of nested types aligns each element's fields, not the struct") {
  Fixture f;
  Path p;
  std::memset(&p, 0, sizeof p);
  p.n = 7;
  // Field by field: assigning a whole Point may copy a temporary's padding.
  p.pts[0].x = 2.0;
  p.pts[0].ok = true;
  p.pts[1].x = -1.0;
  p.pts[1].ok = false;
  const std::vector<std::byte> expected = bytes({
      0x00, 0x01, 0x00, 0x00,                          // header
      0x07, 0,    0,    0,    0,    0,    0,    0,     // n, pad to 8
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  // pts[0].x = 2.0
      0x01, 0,    0,    0,    0,    0,    0,    0,     // pts[0].ok, pad to 8
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0xBF,  // pts[1].x = -1.0
      0x00,                                            // pts[1].ok
  });
  check_round_trip(f, f.path, p, expected);
}

TEST_CASE("cdr: a bool byte other than 0 is written as 1") {
  Fixture f;
  Point p;
  std::memset(&p, 0, sizeof p);
  reinterpret_cast<unsigned char*>(&p)[offsetof(Point, ok)] = 5;
  std::vector<std::byte> out;
  cdr_encode(f.config.schema, f.point, as_bytes(p), out);
  CHECK(out.back() == std::byte{1});
}

TEST_CASE("cdr: bytes samples are a uint32 length and the data") {
  std::vector<std::byte> out;
  const auto hi = bytes({'h', 'i'});
  cdr_encode_bytes(hi, out);
  CHECK(out == bytes({0, 1, 0, 0, 2, 0, 0, 0, 'h', 'i'}));
  CHECK(cdr_bytes_size(2) == out.size());
  const auto view = cdr_decode_bytes(out);
  CHECK(std::vector<std::byte>(view.begin(), view.end()) == hi);

  std::vector<std::byte> room(cdr_bytes_size(2));
  cdr_encode_bytes(hi, std::span<std::byte>(room));
  CHECK(room == out);
  std::vector<std::byte> small(cdr_bytes_size(1));
  CHECK_THROWS_WITH_AS(cdr_encode_bytes(hi, std::span<std::byte>(small)),
                       "the CDR buffer for a bytes sample of 2 bytes is 9 bytes; expected 10",
                       CdrError);

  std::vector<std::byte> empty;
  cdr_encode_bytes({}, empty);
  CHECK(cdr_decode_bytes(empty).empty());

  CHECK_THROWS_WITH_AS((void)cdr_decode_bytes(bytes({0, 1, 0, 0, 9, 0, 0, 0, 'h'})),
                       "CDR bytes sample is truncated: its length at offset 4 says 9 bytes but "
                       "only 1 follow",
                       CdrError);
  CHECK_THROWS_AS((void)cdr_decode_bytes(bytes({0, 1, 0, 0, 2, 0})), CdrError);
  CHECK_THROWS_AS((void)cdr_decode_bytes(bytes({0, 1, 0})), CdrError);
}

TEST_CASE("cdr: a truncated payload is refused at every length, naming the field") {
  Fixture f;
  Reading back;
  const auto sample = std::as_writable_bytes(std::span(&back, 1));
  for (std::size_t n = 0; n < kReadingCdr.size(); ++n) {
    CAPTURE(n);
    CHECK_THROWS_AS(cdr_decode(f.config.schema, f.reading, std::span(kReadingCdr).first(n), sample),
                    CdrError);
  }
  CHECK_THROWS_WITH_AS(
      cdr_decode(f.config.schema, f.reading, std::span(kReadingCdr).first(28), sample),
      "CDR sample of type 'Reading' is truncated: field 'ok' of type 'geo/Point' needs bytes "
      "28..29 but it has 28",
      CdrError);
}

TEST_CASE("cdr: wrong header, bad bool, trailing bytes and wrong sizes are refused") {
  Fixture f;
  Reading back;
  const auto sample = std::as_writable_bytes(std::span(&back, 1));
  auto bad = kReadingCdr;
  bad[1] = std::byte{0};
  CHECK_THROWS_WITH_AS(cdr_decode(f.config.schema, f.reading, bad, sample),
                       "CDR sample of type 'Reading' has encapsulation 0 (big-endian CDR) at "
                       "offset 0; only 1 (little-endian CDR, bytes 00 01) is supported",
                       CdrError);
  bad = kReadingCdr;
  bad[4] = std::byte{2};
  CHECK_THROWS_WITH_AS(cdr_decode(f.config.schema, f.reading, bad, sample),
                       "CDR sample of type 'Reading': bool field 'flag' of type 'Reading' holds "
                       "2 at offset 4; expected 0 or 1",
                       CdrError);
  bad = kReadingCdr;
  bad.insert(bad.end(), 3, std::byte{0});  // alignment padding a writer may add: accepted
  CHECK_NOTHROW(cdr_decode(f.config.schema, f.reading, bad, sample));
  bad.push_back(std::byte{0});
  CHECK_THROWS_WITH_AS(cdr_decode(f.config.schema, f.reading, bad, sample),
                       "CDR sample of type 'Reading' has 4 unexpected bytes after its last field "
                       "at offset 39",
                       CdrError);
  std::vector<std::byte> small(10);
  CHECK_THROWS_AS(cdr_decode(f.config.schema, f.reading, kReadingCdr, small), CdrError);
  std::vector<std::byte> out;
  CHECK_THROWS_AS(cdr_encode(f.config.schema, f.reading, small, out), CdrError);
}

TEST_CASE("cdr: random input decodes or is refused, never crashes") {
  Fixture f;
  std::mt19937 rng(15);
  Reading back;
  const auto sample = std::as_writable_bytes(std::span(&back, 1));
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::byte> input = kReadingCdr;
    input.resize(rng() % (kReadingCdr.size() + 8));
    for (int flips = static_cast<int>(rng() % 4); flips > 0 && !input.empty(); --flips)
      input[rng() % input.size()] = static_cast<std::byte>(rng());
    try {
      cdr_decode(f.config.schema, f.reading, input, sample);
      (void)cdr_decode_bytes(input);
    } catch (const CdrError&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("cdr: a type is its own CDR image only with no padding dropped and no bool") {
  const Config config = load_string(R"(
types:
  Frame:
    fields:
      - { name: stamp_ns, type: u64 }
      - { name: width, type: u32 }
      - { name: height, type: u32 }
      - { name: pixels, type: "u8[1000]" }
  Pair:
    fields:
      - { name: a, type: u32 }
      - { name: b, type: f32 }
  Framed:
    fields:
      - { name: seq, type: u64 }
      - { name: pairs, type: "Pair[3]" }
      - { name: name, type: "char[8]" }
  Padded:
    fields:
      - { name: tag, type: u8 }
      - { name: value, type: u32 }
  TailPadded:
    fields:
      - { name: value, type: u64 }
      - { name: tag, type: u8 }
  Flagged:
    fields:
      - { name: value, type: u32 }
      - { name: ok, type: bool }
      - { name: pad, type: "u8[3]" }
topics: []
)");
  const auto image = [&](const char* name) {
    return cdr_is_sample_image(config.schema, *config.schema.index_of(name));
  };
  CHECK(image("Frame"));
  CHECK(image("Framed"));
  CHECK_FALSE(image("Padded"));      // padding (the sample's stray bytes; CDR's are 0)
  CHECK_FALSE(image("TailPadded"));  // CDR has no tail padding
  CHECK_FALSE(image("Flagged"));     // a bool is normalised to 0 or 1
  // Where it says so, the CDR payload is the sample's bytes.
  std::vector<std::byte> sample(config.schema.type(*config.schema.index_of("Framed")).size);
  for (std::size_t i = 0; i < sample.size(); ++i) sample[i] = static_cast<std::byte>(i * 7 + 1);
  std::vector<std::byte> cdr;
  cdr_encode(config.schema, *config.schema.index_of("Framed"), sample, cdr);
  REQUIRE(cdr.size() == kCdrHeaderSize + sample.size());
  CHECK(std::memcmp(cdr.data() + kCdrHeaderSize, sample.data(), sample.size()) == 0);
}
