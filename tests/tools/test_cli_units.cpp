// The pieces of the ferry CLI that need no daemon: the sample decoder and
// encoder, the rate window of hz/bw, the rate meter of list/top, the number
// formats.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "all_types_yaml.hpp"
#include "delay_stats.hpp"
#include "ferry/config/load.hpp"
#include "format.hpp"
#include "gap_counter.hpp"
#include "queue_counters.hpp"
#include "rate_stats.hpp"
#include "sample_codec.hpp"

using namespace ferry::cli;

namespace {

const std::string kTypes = std::string("types:\n") + ferry::test::kInnerAndAllTypes +
                           "  Big:\n"
                           "    fields:\n"
                           "      - { name: pixels, type: \"u8[1000]\" }\n"
                           "      - { name: depth, type: \"f32[300]\" }\n"
                           "  Blob: { size: 40 }\n"
                           "topics:\n"
                           "  - { name: all, type: All }\n";

struct Fixture {
  ferry::config::Config config = ferry::config::load_string(kTypes, "types.yaml");
  const ferry::config::Type& type(const char* name) const { return *config.schema.find(name); }

  std::vector<std::byte> encode(const char* type_name, const char* value) const {
    auto node = parse_value(value);
    REQUIRE_MESSAGE(node.has_value(), node.error());
    auto bytes = encode_sample(config.schema, type(type_name), *node);
    REQUIRE_MESSAGE(bytes.has_value(), bytes.error());
    return *bytes;
  }
  std::string encode_error(const char* type_name, const char* value) const {
    auto node = parse_value(value);
    if (!node) return node.error();
    auto bytes = encode_sample(config.schema, type(type_name), *node);
    REQUIRE_FALSE(bytes.has_value());
    return bytes.error();
  }
  Json round_trip(const char* type_name, const char* value) const {
    const auto bytes = encode(type_name, value);
    CHECK(bytes.size() == type(type_name).size);
    return decode_sample(config.schema, type(type_name), bytes);
  }
};

}  // namespace

TEST_CASE("every field type survives encode then decode") {
  Fixture f;
  const Json v = f.round_trip(
      "All",
      "{b: true, i8: -128, i16: -32768, i32: -2147483648, i64: -9223372036854775808, u8: 255, "
      "u16: 65535, u32: 4294967295, u64: 18446744073709551615, f32: 0.1, f64: -2.5e-300, "
      "name: robot-7, arr: [1, -2, 3], inner: {flag: true, label: abc, value: 1.5}, "
      "inners: [{label: x}, {flag: true, value: -1}]}");
  CHECK(v["b"] == true);
  CHECK(v["i8"] == -128);
  CHECK(v["i16"] == -32768);
  CHECK(v["i32"] == std::numeric_limits<std::int32_t>::min());
  CHECK(v["i64"] == std::numeric_limits<std::int64_t>::min());
  CHECK(v["u8"] == 255);
  CHECK(v["u16"] == 65535);
  CHECK(v["u32"] == 4294967295U);
  CHECK(v["u64"] == std::numeric_limits<std::uint64_t>::max());
  CHECK(v["f32"] == 0.1);  // the shortest form of 0.1f
  CHECK(v["f64"] == -2.5e-300);
  CHECK(v["name"] == "robot-7");
  CHECK(v["arr"] == Json::array({1, -2, 3}));
  CHECK(v["inner"] == Json{{"flag", true}, {"label", "abc"}, {"value", 1.5}});
  CHECK(v["inners"][0] == Json{{"flag", false}, {"label", "x"}, {"value", 0.0}});
  CHECK(v["inners"][1] == Json{{"flag", true}, {"label", ""}, {"value", -1.0}});
  // Fields stay in declaration order.
  CHECK(v.begin().key() == "b");
  CHECK(std::prev(v.end()).key() == "inners");
}

TEST_CASE("missing fields are zero and JSON input works too") {
  Fixture f;
  const Json v = f.round_trip("All", R"({"u16": 7, "arr": [5], "inner": {"label": "q"}})");
  CHECK(v["u16"] == 7);
  CHECK(v["b"] == false);
  CHECK(v["i64"] == 0);
  CHECK(v["f64"] == 0.0);
  CHECK(v["name"] == "");
  CHECK(v["arr"] == Json::array({5, 0, 0}));
  CHECK(v["inner"]["label"] == "q");
  CHECK(f.round_trip("All", "{}") == f.round_trip("All", ""));
}

TEST_CASE("numbers accept signs, hexadecimal and YAML's float specials") {
  Fixture f;
  const Json v =
      f.round_trip("All", "{i8: +5, u32: 0xFFFFFFFF, i16: -0x10, f64: .inf, f32: -.inf}");
  CHECK(v["i8"] == 5);
  CHECK(v["u32"] == 4294967295U);
  CHECK(v["i16"] == -16);
  CHECK(v["f64"] == ".inf");
  CHECK(v["f32"] == "-.inf");
  CHECK(f.round_trip("All", "{f64: .nan}")["f64"] == ".nan");
}

TEST_CASE("an unknown field, a wrong type or an out-of-range number is refused, naming the field") {
  Fixture f;
  const auto unknown = f.encode_error("All", "{b: true, bogus: 1}");
  CHECK(unknown.find("unknown field 'bogus' in type 'All'") != std::string::npos);
  CHECK(unknown.find("b, i8, i16") != std::string::npos);  // lists the fields
  CHECK(f.encode_error("All", "{inner: {nope: 1}}").find("'inner.nope'") != std::string::npos);

  CHECK(f.encode_error("All", "{u8: 256}") == "field 'u8': out of range for u8 (0..255)");
  CHECK(f.encode_error("All", "{u8: -1}") == "field 'u8': out of range for u8 (0..255)");
  CHECK(f.encode_error("All", "{i8: -129}") == "field 'i8': out of range for i8 (-128..127)");
  CHECK(f.encode_error("All", "{u64: 18446744073709551616}").find("out of range for u64") !=
        std::string::npos);
  CHECK(f.encode_error("All", "{f32: 1e39}").find("field 'f32': out of range for f32") == 0);
  CHECK(f.encode_error("All", "{f64: 1e999}") == "field 'f64': out of range for f64");

  CHECK(f.encode_error("All", "{i32: 1.5}") == "field 'i32': expected an integer (i32), got '1.5'");
  CHECK(f.encode_error("All", "{i32: \"7\"}").find("field 'i32': expected i32, got the string") ==
        0);
  CHECK(f.encode_error("All", "{f64: abc}") == "field 'f64': expected a number (f64), got 'abc'");
  CHECK(f.encode_error("All", "{b: 1}") == "field 'b': expected true or false, got '1'");
  CHECK(f.encode_error("All", "{b: [true]}") == "field 'b': expected true or false, got a list");
  CHECK(f.encode_error("All", "{inner: 3}")
            .find("field 'inner': expected a map of the fields of 'Inner'") == 0);
  CHECK(f.encode_error("All", "{arr: 3}") == "field 'arr': expected a list (i32[3]), got '3'");
  CHECK(f.encode_error("All", "{arr: [1, 2, 3, 4]}") ==
        "field 'arr': 4 elements given; a i32[3] holds 3");
  CHECK(f.encode_error("All", "{arr: [1, x]}") ==
        "field 'arr[1]': expected an integer (i32), got 'x'");
  CHECK(f.encode_error("All", "{inners: [{}, {flag: 2}]}") ==
        "field 'inners[1].flag': expected true or false, got '2'");
  CHECK(f.encode_error("All", "{name: 0123456789abcdef}").find("a char[16] holds at most 15") !=
        std::string::npos);
  CHECK(f.encode_error("All", "[1, 2]").find("VALUE: expected a map of the fields of 'All'") == 0);
  CHECK(f.encode_error("Blob", "{a: 1}").find("opaque") != std::string::npos);
}

TEST_CASE("malformed VALUE text is one sentence, never a hang") {
  const auto bad = parse_value("{x: [1, 2}");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().find("VALUE is not valid YAML or JSON") == 0);
  // Inputs that make yaml-cpp 0.7's LoadAll loop forever.
  for (const char* text : {"{", "[", "{x: 1", "- - -\n  - ]", "\"unterminated"}) {
    CAPTURE(text);
    (void)parse_value(text);  // returns (an error or a node) rather than looping
  }
}

TEST_CASE("opaque types, short samples and long arrays are shown as size and hex prefix") {
  Fixture f;
  std::vector<std::byte> blob(40);
  for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::byte>(i);
  const Json opaque = decode_sample(f.config.schema, f.type("Blob"), blob);
  CHECK(opaque["size"] == 40);
  CHECK(opaque["hex"] ==
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");  // 32 bytes

  const Json short_sample = decode_sample(f.config.schema, f.type("All"), std::span(blob).first(8));
  CHECK(short_sample["size"] == 8);

  std::vector<std::byte> big(f.type("Big").size);
  big[0] = std::byte{0xAB};
  const float depth = 2.5F;
  std::memcpy(big.data() + f.type("Big").fields[1].offset, &depth, sizeof depth);
  const Json b = decode_sample(f.config.schema, f.type("Big"), big);
  CHECK(b["pixels"]["size"] == 1000);
  CHECK(b["pixels"]["hex"].get<std::string>().substr(0, 4) == "ab00");
  CHECK(b["depth"]["count"] == 300);
  CHECK(b["depth"]["head"].size() == kArrayHead);
  CHECK(b["depth"]["head"][0] == 2.5);
}

TEST_CASE("the human form is YAML that reads back to the same values") {
  Fixture f;
  const Json v = f.round_trip("All",
                              "{b: true, name: \"a \\\"q\\\"\", arr: [1, 2, 3], f64: .nan, "
                              "inners: [{label: x}, {value: 2}]}");
  const std::string text = to_yaml_text(v);
  CHECK(text.find("b: true\n") != std::string::npos);
  CHECK(text.find("arr: [1, 2, 3]\n") != std::string::npos);
  CHECK(text.find("inner:\n  flag: false\n") != std::string::npos);
  CHECK(text.find("inners:\n  - flag: false\n    label: \"x\"\n") != std::string::npos);
  const YAML::Node back = YAML::Load(text);
  CHECK(back["name"].as<std::string>() == "a \"q\"");
  CHECK(back["arr"][2].as<int>() == 3);
  CHECK(std::isnan(back["f64"].as<double>()));
  CHECK(back["inners"][1]["value"].as<double>() == 2.0);
  CHECK(back["u64"].as<std::uint64_t>() == 0);
}

TEST_CASE("JSON lines replace invalid UTF-8 instead of failing") {
  const Json v{{"s", std::string("a\xff")}};
  CHECK(to_json_line(v) == "{\"s\":\"a\xEF\xBF\xBD\"}");
}

TEST_CASE("the rate window reports rate, interval spread and bandwidth") {
  using namespace std::chrono;
  RateWindow w(4);
  const auto t0 = RateWindow::Clock::time_point{};
  CHECK_FALSE(w.report().has_value());
  w.add(t0, 100);
  CHECK_FALSE(w.report().has_value());
  w.add(t0 + milliseconds(10), 100);
  w.add(t0 + milliseconds(30), 300);
  const auto r = w.report();
  REQUIRE(r.has_value());
  CHECK(r->window == 3);
  CHECK(r->rate_hz == doctest::Approx(66.6667).epsilon(1e-4));
  CHECK(r->min_interval_s == doctest::Approx(0.010));
  CHECK(r->max_interval_s == doctest::Approx(0.020));
  CHECK(r->std_dev_s == doctest::Approx(0.005));
  CHECK(r->bytes_per_s == doctest::Approx(400 / 0.030));
  CHECK(r->mean_size == doctest::Approx(500.0 / 3));
  CHECK(r->min_size == 100);
  CHECK(r->max_size == 300);
  // The window keeps the last 4 arrivals.
  w.add(t0 + milliseconds(40), 100);
  w.add(t0 + milliseconds(50), 100);
  CHECK(w.report()->window == 4);
  CHECK(w.report()->max_interval_s == doctest::Approx(0.020));
  CHECK(w.total() == 5);
}

TEST_CASE("the delay window reports nearest-rank p50, p90 and max of the last S seconds") {
  using namespace std::chrono;
  DelayWindow w(seconds(1));
  const auto t0 = DelayWindow::Clock::time_point{};
  CHECK_FALSE(w.report().has_value());
  // Delays 1..10 ms, one every 10 ms.
  for (int i = 1; i <= 10; ++i) w.add(t0 + milliseconds(10 * i), i * 1'000'000);
  auto r = w.report();
  REQUIRE(r.has_value());
  CHECK(r->count == 10);
  CHECK(r->p50_ms == doctest::Approx(5.0));
  CHECK(r->p90_ms == doctest::Approx(9.0));
  CHECK(r->max_ms == doctest::Approx(10.0));
  CHECK(r->min_ms == doctest::Approx(1.0));
  // 1.05 s after the first: it and the second (taken 10 and 20 ms in) have
  // left the window, the rest stay.
  w.expire(t0 + milliseconds(1025));
  r = w.report();
  REQUIRE(r.has_value());
  CHECK(r->count == 8);
  CHECK(r->min_ms == doctest::Approx(3.0));
  w.expire(t0 + seconds(5));
  CHECK_FALSE(w.report().has_value());
  CHECK(w.total() == 10);
  // Bounded: the oldest go first.
  DelayWindow small(seconds(10), 3);
  for (int i = 1; i <= 5; ++i) small.add(t0, i * 1'000'000);
  CHECK(small.report()->count == 3);
  CHECK(small.report()->min_ms == doctest::Approx(3.0));
}

TEST_CASE("numbers for humans") {
  CHECK(human_rate(std::nullopt) == "-");
  CHECK(human_rate(49.96) == "50.0");
  CHECK(human_rate(12345) == "12.3k");
  CHECK(human_bytes(64) == "64 B");
  CHECK(human_bytes(3.2 * 1024) == "3.20 KiB");
  CHECK(human_bytes(1536.0 * 1024 * 1024) == "1.50 GiB");
  CHECK(human_count(9999) == "9999");
  CHECK(human_count(12345) == "12.3k");
  CHECK(human_millis(850) == "850ms");
  CHECK(human_millis(12345) == "12.3s");
  CHECK(human_millis(245'000) == "4m05s");
}

namespace {
TopicSnapshot published(const char* topic, std::uint64_t publisher, std::uint64_t count,
                        RateMeter::Clock::time_point at) {
  TopicSnapshot s;
  s.info.name = topic;
  s.published_by[publisher] = count;
  s.at = at;
  return s;
}
}  // namespace

TEST_CASE("the rate meter reads a 10 Hz publisher as 10.0 from half a second of polling") {
  using namespace std::chrono;
  RateMeter meter;
  const auto t0 = RateMeter::Clock::time_point{} + seconds(100);
  // Polled every 5 ms; a sample every 100 ms starting at 30 ms.
  for (int ms = 0; ms <= 500; ms += 5) {
    const std::uint64_t count = ms < 30 ? 0 : static_cast<std::uint64_t>((ms - 30) / 100 + 1);
    meter.observe(published("pose", 1, 1000 + count, t0 + milliseconds(ms)));
  }
  const auto rate = meter.rate("pose", t0 + milliseconds(500));
  REQUIRE(rate.has_value());
  CHECK(*rate == doctest::Approx(10.0));
  CHECK(meter.fewest_changes() == 5);
  CHECK_FALSE(meter.rate("other", t0).has_value());  // no counters: unknown

  // Silent since: after a few intervals it reads as the window's average.
  meter.restart();
  for (int ms = 505; ms <= 1500; ms += 5)
    meter.observe(published("pose", 1, 1005, t0 + milliseconds(ms)));
  CHECK(*meter.rate("pose", t0 + milliseconds(1500)) == doctest::Approx(0.0));
  CHECK(meter.fewest_changes() == 0);
}

TEST_CASE("the rate meter sums publishers and starts over when a counter goes back") {
  using namespace std::chrono;
  RateMeter meter;
  const auto t0 = RateMeter::Clock::time_point{} + seconds(100);
  for (int ms = 0; ms <= 1000; ms += 10) {
    TopicSnapshot s =
        published("t", 1, static_cast<std::uint64_t>(ms / 50), t0 + milliseconds(ms));  // 20 Hz
    s.published_by[2] = static_cast<std::uint64_t>(ms / 100);                           // 10 Hz
    meter.observe(s);
  }
  CHECK(*meter.rate("t", t0 + milliseconds(1000)) == doctest::Approx(30.0));
  // Publisher 2's busiest queue went away: its count restarts lower.
  TopicSnapshot s = published("t", 1, 21, t0 + milliseconds(1010));
  s.published_by[2] = 3;
  meter.observe(s);
  CHECK(meter.fewest_changes() == 0);
}

TEST_CASE("GapCounter: missed sequences per publisher, their first ranges named") {
  GapCounter gaps;
  gaps.taken(7, 100);  // the first sample taken: nothing before it counts
  gaps.taken(7, 101);
  CHECK(gaps.missed() == 0);
  CHECK(gaps.describe().empty());
  gaps.taken(7, 105);  // 102..104
  gaps.taken(9, 0);
  gaps.taken(9, 2);    // 1
  gaps.taken(7, 107);  // 106
  CHECK(gaps.missed() == 5);
  CHECK(gaps.describe() == "publisher 7: 102-104; publisher 9: 1; publisher 7: 106");
  gaps.taken(7, 3);  // a publisher id reused from 0: counting starts afresh
  gaps.taken(7, 4);
  CHECK(gaps.missed() == 5);
  for (std::uint64_t i = 0; i < GapCounter::kMaxRanges; ++i) gaps.taken(9, 4 + 2 * i);
  CHECK(gaps.missed() == 5 + GapCounter::kMaxRanges);
  CHECK(gaps.ranges().size() == GapCounter::kMaxRanges);
  CHECK(gaps.describe().ends_with(", ..."));
}
