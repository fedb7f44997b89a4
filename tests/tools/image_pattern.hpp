#pragma once
// sensor_msgs/msg/Image samples of two sizes for the multi-process tests
// (through the `ferry gen cpp` header of config/msgs/sensor_msgs.yaml):
// image i is 640x480 when i is even, 1920x1080 when odd, RGB8, byte p of
// its data (p * 31 + i) & 0xFF.

#include <cstddef>
#include <cstdint>
#include <string>

#include "sensor_msgs.hpp"

namespace image_test {

inline std::uint32_t width_of(std::uint32_t i) { return i % 2 == 0 ? 640 : 1920; }
inline std::uint32_t height_of(std::uint32_t i) { return i % 2 == 0 ? 480 : 1080; }
inline std::uint8_t pixel(std::size_t p, std::uint32_t i) {
  return static_cast<std::uint8_t>((p * 31 + i) & 0xFF);
}

// Writes image i in place (a loan): false if a field did not fit its bound.
inline bool fill(sensor_msgs::msg::Image& img, std::uint32_t i) {
  img.header.stamp.sec = static_cast<std::int32_t>(100 + i);
  img.header.stamp.nanosec = 500u + i;
  img.width = width_of(i);
  img.height = height_of(i);
  img.is_bigendian = 0;
  img.step = img.width * 3;
  if (!img.header.frame_id.assign("camera_" + std::to_string(i)) || !img.encoding.assign("rgb8") ||
      !img.data.resize_for_overwrite(std::size_t{img.step} * img.height))
    return false;
  std::uint8_t* data = img.data.data();
  const std::size_t n = img.data.size();
  for (std::size_t p = 0; p < n; ++p) data[p] = pixel(p, i);
  return true;
}

// What is wrong with image i as received, or empty.
inline std::string check(const sensor_msgs::msg::Image& img, std::uint32_t i) {
  if (img.width != width_of(i) || img.height != height_of(i)) return "wrong size";
  if (img.header.frame_id.view() != "camera_" + std::to_string(i)) return "wrong frame_id";
  if (img.encoding.view() != "rgb8") return "wrong encoding";
  if (img.data.size() != std::size_t{img.width} * img.height * 3) return "wrong data size";
  const std::uint8_t* data = img.data.data();
  for (std::size_t p = 0; p < img.data.size(); ++p)
    if (data[p] != pixel(p, i)) return "wrong pixel " + std::to_string(p);
  return {};
}

}  // namespace image_test
