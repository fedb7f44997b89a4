#pragma once
// What a C++ fragment of the documentation (<!-- check: fragment -->) finds
// in scope: the documentation's types and a node with ports of them. Each
// fragment becomes the body of a function taking these names as parameters
// (scripts/doc-snippets.py); it is compiled and linked, never run.

#include <poll.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ferry/ferry.hpp>
#include <optional>
#include <span>
#include <thread>

// The types of tests/docs/docs.yaml.
struct Pose {
  std::uint64_t stamp_ns;
  double x, y;
  char frame[16];
};
FERRY_TYPE(Pose);

struct Frame {
  std::uint32_t width, height;
  std::uint8_t pixels[3110400];
};
FERRY_TYPE(Frame);

// node: a ferry::Node; pub/sub: robot/pose; pose_sub, cmd_sub: two more
// subscribers of Pose; frames/frame_sub: camera/frames (Frame, pooled);
// bytes_pub/bytes_sub: logs/text (a bytes topic).
#define FERRY_DOC_FRAGMENT_PARAMETERS                                              \
  [[maybe_unused]] ferry::Node &node, [[maybe_unused]] ferry::Publisher<Pose>&pub, \
      [[maybe_unused]] ferry::Subscriber<Pose>&sub,                                \
      [[maybe_unused]] ferry::Subscriber<Pose>&pose_sub,                           \
      [[maybe_unused]] ferry::Subscriber<Pose>&cmd_sub,                            \
      [[maybe_unused]] ferry::Publisher<Frame>&frames,                             \
      [[maybe_unused]] ferry::Subscriber<Frame>&frame_sub,                         \
      [[maybe_unused]] ferry::Publisher<ferry::Bytes>&bytes_pub,                   \
      [[maybe_unused]] ferry::Subscriber<ferry::Bytes>&bytes_sub
#define FERRY_DOC_FRAGMENT_BEGIN
#define FERRY_DOC_FRAGMENT_END
