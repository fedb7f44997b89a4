#pragma once
// A 1080p NV12 frame, as docs/configuration.md's Frame type (the camera example's size):
// far above the inline limit, so it always travels through the pool.

#include <cstdint>
#include <ferry/ferry.hpp>

struct Frame {
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[3110400];
};
FERRY_TYPE(Frame);
