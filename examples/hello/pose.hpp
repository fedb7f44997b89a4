#pragma once
#include <cstdint>

#include <ferry/ferry.hpp>

// Matches the Pose type declared in hello.yaml field for field.
struct Pose {
  std::uint64_t stamp_ns;
  double x;
  double y;
  char frame[16];
};
FERRY_TYPE(Pose);
