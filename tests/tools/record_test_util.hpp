#pragma once
// What the record and play tests publish: the All type of all_types_yaml.hpp
// (every field type, nested types, arrays), 1080p frames and log lines, each
// a function of its index so that a checker can rebuild what was sent.

#include <cstdint>
#include <cstring>
#include <ferry/ferry.hpp>
#include <memory>
#include <string>
#include <vector>

#include "all_types.hpp"
#include "daemon_fixture.hpp"

namespace record_test {

using ferry::test::All;
using ferry::test::Inner;

struct Frame {
  std::uint64_t stamp_ns;
  std::uint64_t seq;
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[1920 * 1080 * 3 / 2];  // NV12
};

// Sets an Inner's fields, leaving its padding as it was (zero in make_all).
inline void set_inner(Inner& inner, bool flag, const char* label, double value) {
  inner.flag = flag;
  std::strncpy(inner.label, label, sizeof inner.label);
  inner.value = value;
}

inline All make_all(std::uint32_t i) {
  All a;
  std::memset(&a, 0, sizeof a);  // padding too: the bytes compared are the whole struct
  a.b = i % 2 == 1;
  a.i8 = static_cast<std::int8_t>(-static_cast<int>(i % 100));
  a.i16 = static_cast<std::int16_t>(-300 - static_cast<int>(i));
  a.i32 = -70000 - static_cast<std::int32_t>(i);
  a.i64 = -5000000000LL - i;
  a.u8 = static_cast<std::uint8_t>(200 + i % 50);
  a.u16 = static_cast<std::uint16_t>(60000 + i);
  a.u32 = 4000000000u + i;
  a.u64 = 18000000000000000000ull + i;
  a.f32 = 1.5f + static_cast<float>(i);
  a.f64 = -2.25 * i;
  std::snprintf(a.name, sizeof a.name, "all-%u", i);
  a.arr[0] = static_cast<std::int32_t>(i);
  a.arr[1] = -2;
  a.arr[2] = 3 * static_cast<std::int32_t>(i);
  // Field by field: assigning a braced Inner would copy a temporary's
  // padding, which is indeterminate (garbage at -Og under ASan).
  set_inner(a.inner, true, "in", 0.5 + i);
  set_inner(a.inners[0], false, "first", 1.0 * i);
  set_inner(a.inners[1], true, "second", -1.0 * i);
  return a;
}

inline void fill_frame(Frame& f, std::uint32_t i) {
  f.stamp_ns = 1000u + i;
  f.seq = i;
  f.width = 1920;
  f.height = 1080;
  std::memset(f.pixels, static_cast<int>(i * 7 & 0xFF), sizeof f.pixels);
  f.pixels[(i * 4099) % sizeof f.pixels] = 0xAB;
}

inline std::string log_line(std::uint32_t i) {
  return "log line " + std::to_string(i) + std::string((i * 37) % 500, 'x');
}

// The configuration: the three topics (`block`, so that every sample
// published is recorded), and a drop_oldest topic for the gap test. Frame
// is tests/support/pose_frame.yaml's.
inline std::string config_yaml() {
  return "include: [" + ferry::test::support_path("pose_frame.yaml") + "]\ntypes:\n" +
         ferry::test::kInnerAndAllTypes + R"(  Tick:
    fields:
      - { name: n, type: u64 }
      - { name: pad, type: "u8[56]" }
topics:
  - { name: all, type: All, capacity: 64, policy: block, block_timeout_ms: 5000 }
  - { name: camera/frames, type: Frame, capacity: 4, policy: block, block_timeout_ms: 5000 }
  - { name: logs/text, type: bytes, max_size: 1KiB, capacity: 16, policy: block, block_timeout_ms: 5000 }
  - { name: ticks, type: Tick, capacity: 8, policy: drop_oldest }
pool:
  - { chunk_size: 1KiB, count: 128 }
  - { chunk_size: 4MiB, count: 24 }
)";
}

struct Tick {
  std::uint64_t n;
  std::uint8_t pad[56];
};

}  // namespace record_test

FERRY_TYPE_NAMED(record_test::Frame, "Frame");
FERRY_TYPE_NAMED(record_test::Tick, "Tick");
