#pragma once
// A 1080p NV12 frame, as docs/configuration.md's Frame type (the camera example's size):
// far above the inline limit, so it always travels through the pool.

#include <cstdint>
#include <ferry/ferry.hpp>
#include <string>

struct Frame {
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[3110400];
};
FERRY_TYPE(Frame);

// Its declaration, as an entry of a config's `types:` map (seq_config's
// `extra` continues that map: pubsub_util.hpp).
inline const std::string kFrameType =
    "  Frame:\n"
    "    fields:\n"
    "      - { name: width, type: u32 }\n"
    "      - { name: height, type: u32 }\n"
    "      - { name: pixels, type: \"u8[3110400]\" }\n";
