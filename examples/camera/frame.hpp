#pragma once
#include <chrono>
#include <cstdint>
#include <ferry/ferry.hpp>

// Frame (pixels: one 1080p NV12 image): `ferry gen cpp camera.yaml` at build time.
#include "camera_types.hpp"

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}
