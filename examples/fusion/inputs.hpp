#pragma once
#include <cstdint>
#include <ferry/ferry.hpp>

// Match the types declared in fusion.yaml field for field.
struct Pose {
  std::uint64_t stamp_ns;
  double x;
  double y;
  double yaw;
};
FERRY_TYPE(Pose);

struct Command {
  std::uint64_t seq;
  double speed;
  bool stop;  // the last command: the node reports and exits
};
FERRY_TYPE(Command);
static_assert(sizeof(Command) == 24);

struct Image {
  std::uint64_t stamp_ns;
  std::uint64_t seq;
  std::uint8_t pixels[640 * 480];
};
FERRY_TYPE(Image);
