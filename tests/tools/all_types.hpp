#pragma once
// The C layout of all_types_yaml.hpp's `Inner` and `All`, for tests that
// publish or take them from C++ (record/play, the bridge, Python interop):
// one definition, registered as "All".

#include <cstdint>

#include "all_types_yaml.hpp"
#include "ferry/type_name.hpp"

namespace ferry::test {

struct Inner {
  bool flag;
  char label[8];
  double value;
};
struct All {
  bool b;
  std::int8_t i8;
  std::int16_t i16;
  std::int32_t i32;
  std::int64_t i64;
  std::uint8_t u8;
  std::uint16_t u16;
  std::uint32_t u32;
  std::uint64_t u64;
  float f32;
  double f64;
  char name[16];
  std::int32_t arr[3];
  Inner inner;
  Inner inners[2];
};

}  // namespace ferry::test

FERRY_TYPE_NAMED(ferry::test::All, "All");
