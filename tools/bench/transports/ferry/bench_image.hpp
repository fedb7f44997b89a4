#pragma once
// sensor_msgs/msg/Image as `ferry gen cpp` writes it from ferry's shipped
// definitions (config/msgs/sensor_msgs.yaml; docs/messages.md), for the
// ferry-image latency transport. Written out here because the benchmark is
// part of the `ferry` program that generates headers; ferryd checks its
// name, size and alignment against the shipped definition.

#include <cstdint>

#include "ferry/bounded.hpp"
#include "ferry/type_name.hpp"
#include "harness/bench_config.hpp"

namespace ferry::bench::msgs {

struct Time {
  std::int32_t sec;
  std::uint32_t nanosec;
};
struct Header {
  Time stamp;
  ::ferry::String<64> frame_id;
};
struct Image {
  Header header;
  std::uint32_t height;
  std::uint32_t width;
  ::ferry::String<32> encoding;
  std::uint8_t is_bigendian;
  std::uint32_t step;
  ::ferry::Vector<std::uint8_t, 24883200> data;
};
static_assert(sizeof(Image) == kBenchImageSize);
static_assert(alignof(Image) == 4);

}  // namespace ferry::bench::msgs

FERRY_TYPE_NAMED(ferry::bench::msgs::Image, "sensor_msgs/msg/Image");
