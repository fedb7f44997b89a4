#pragma once
#include <chrono>
#include <cstdint>

#include <ferry/ferry.hpp>

// Matches the Frame type declared in camera.yaml field for field.
struct Frame {
  std::uint64_t stamp_ns;
  std::uint64_t seq;
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[1920 * 1080 * 3 / 2];  // NV12
};
FERRY_TYPE(Frame);
static_assert(sizeof(Frame) == 3110424);

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}
