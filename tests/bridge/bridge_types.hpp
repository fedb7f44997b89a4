#pragma once
// The bridge tests' ferry types and configuration. All and Inner are the
// all-types schema of tests/tools/all_types_yaml.hpp as C++ structs; the
// same values are written by dds_peer's fill_all() (the formula below) and
// printed in its line format, so that both sides compare field for field.

#include <cstdint>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>

#include "../tools/all_types.hpp"

namespace ferry::test {

struct Small {
  std::uint64_t stamp_ns;
  std::uint64_t seq;
  std::uint8_t pad[48];
};
inline constexpr std::uint32_t kFrameBytes = 1920 * 1080 * 3 / 2;  // NV12
struct Frame {
  std::uint64_t stamp_ns;
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[kFrameBytes];
};

inline std::string bridge_yaml() {
  return std::string(
             "liveness: { heartbeat_ms: 100, timeout_ms: 2000 }\n"
             "pool:\n"
             "  - { chunk_size: 4KiB, count: 2048 }\n"
             "  - { chunk_size: 3MiB, count: 16 }\n"
             "types:\n") +
         kInnerAndAllTypes +
         "  Small:\n"
         "    fields:\n"
         "      - { name: stamp_ns, type: u64 }\n"
         "      - { name: seq, type: u64 }\n"
         "      - { name: pad, type: \"u8[48]\" }\n"
         "  Frame:\n"
         "    fields:\n"
         "      - { name: stamp_ns, type: u64 }\n"
         "      - { name: width, type: u32 }\n"
         "      - { name: height, type: u32 }\n"
         "      - { name: pixels, type: \"u8[3110400]\" }\n"
         "topics:\n"
         "  - { name: bridge/all, type: All, capacity: 64, policy: block }\n"
         "  - { name: bridge/seq, type: Small, capacity: 1024, policy: block, block_timeout_ms: "
         "5000 }\n"
         "  - { name: bridge/frames, type: Frame, capacity: 4, policy: block, block_timeout_ms: "
         "2000 }\n"
         "  - { name: bridge/bytes, type: bytes, max_size: 1KiB, capacity: 64, policy: block }\n"
         "  - { name: bridge/latest, type: Small, capacity: 4, policy: drop_oldest }\n"
         "  - { name: bridge/history, type: Small, capacity: 8, policy: drop_oldest, history: 3 }\n"
         "  - { name: bridge/first, type: Small, capacity: 4, policy: drop_new }\n"
         "  - { name: bridge/stall, type: Small, capacity: 4, policy: block, block_timeout_ms: "
         "2000 }\n"
         "  - { name: bench/ping, type: Small, capacity: 4, policy: drop_oldest }\n"
         "  - { name: bench/pong, type: Small, capacity: 4, policy: drop_oldest }\n"
         "  - { name: bench/flood, type: Small, capacity: 1024, policy: block, block_timeout_ms: "
         "5000 }\n"
         "  - { name: bench/fping, type: Frame, capacity: 2, policy: drop_oldest }\n"
         "  - { name: bench/fpong, type: Frame, capacity: 2, policy: drop_oldest }\n";
}

// dds_peer's fill_all(), for sample `i`.
inline All all_value(std::uint32_t i) {
  All s{};
  s.b = (i % 2) != 0;
  s.i8 = static_cast<std::int8_t>(-static_cast<int>(i % 100));
  s.i16 = static_cast<std::int16_t>(-1000 - static_cast<int>(i));
  s.i32 = -100000 - static_cast<std::int32_t>(i);
  s.i64 = -10000000000LL - static_cast<std::int64_t>(i);
  s.u8 = static_cast<std::uint8_t>(200 + i % 50);
  s.u16 = static_cast<std::uint16_t>(60000 + i);
  s.u32 = 4000000000u + i;
  s.u64 = 18000000000000000000ull + i;
  s.f32 = 1.5f + static_cast<float>(i);
  s.f64 = -2.25 - static_cast<double>(i);
  std::snprintf(s.name, sizeof s.name, "dds-%u", i);
  for (int k = 0; k < 3; ++k)
    s.arr[k] = static_cast<std::int32_t>(i * 10 + static_cast<std::uint32_t>(k));
  s.inner.flag = true;
  std::snprintf(s.inner.label, sizeof s.inner.label, "in%u", i % 10000);
  s.inner.value = 0.5 * i;
  for (int k = 0; k < 2; ++k) {
    s.inners[k].flag = k == 1;
    s.inners[k].label[0] = 'k';  // "k0", "k1" (snprintf made -O1 warn of truncation)
    s.inners[k].label[1] = static_cast<char>('0' + k);
    s.inners[k].label[2] = '\0';
    s.inners[k].value = 100.0 * k + i;
  }
  return s;
}

inline std::string label(const char* p, std::size_t n) {
  std::string s;
  for (std::size_t k = 0; k < n && p[k] != 0; ++k) s += p[k];
  return s;
}

// dds_peer's print_all() line.
inline std::string all_line(const All& s) {
  char head[512];
  std::snprintf(
      head, sizeof head,
      "b=%d i8=%d i16=%d i32=%d i64=%lld u8=%u u16=%u u32=%u u64=%llu f32=%g f64=%g name=", s.b,
      s.i8, s.i16, s.i32, static_cast<long long>(s.i64), s.u8, s.u16, s.u32,
      static_cast<unsigned long long>(s.u64), static_cast<double>(s.f32), s.f64);
  std::string line = head + label(s.name, sizeof s.name);
  char rest[256];
  std::snprintf(rest, sizeof rest, " arr=%d,%d,%d inner=%d/", s.arr[0], s.arr[1], s.arr[2],
                s.inner.flag);
  line += rest + label(s.inner.label, sizeof s.inner.label);
  std::snprintf(rest, sizeof rest, "/%g", s.inner.value);
  line += rest;
  for (int k = 0; k < 2; ++k) {
    std::snprintf(rest, sizeof rest, " inners%d=%d/", k, s.inners[k].flag);
    line += rest + label(s.inners[k].label, sizeof s.inners[k].label);
    std::snprintf(rest, sizeof rest, "/%g", s.inners[k].value);
    line += rest;
  }
  return line;
}

}  // namespace ferry::test

FERRY_TYPE_NAMED(ferry::test::Small, "Small");
FERRY_TYPE_NAMED(ferry::test::Frame, "Frame");
