#pragma once
// How a topic's samples look in a recording (docs/record-replay.md): the ROS 2 schema
// name and .msg definition of its type, and the CDR form of one sample,
// written straight into the file's chunk buffer (the one copy on the way).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "ferry/config/config.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::cli {

struct ChannelLayout {
  enum class Kind : std::uint8_t {
    Declared,    // a struct or opaque type of the configuration
    Bytes,       // a `type: bytes` topic
    Undeclared,  // a C++ type the configuration does not declare: uint8[size] data
  };
  Kind kind = Kind::Undeclared;
  std::string ferry_type;         // the topic's type name in ferry
  std::string schema_name;        // e.g. "geo/msg/Pose"
  std::string definition;         // the ros2msg text
  std::size_t type = 0;           // Declared: its index in the schema
  std::uint64_t sample_size = 0;  // Declared and Undeclared: the C layout's size
  std::uint64_t cdr_size = 0;     // Declared and Undeclared: every sample's CDR size
                                  // (unless `variable`)
  bool variable = false;          // Declared: a type with string<=N or T[<=N]
  // Declared and Undeclared: the CDR payload is the sample's bytes as they
  // are (config::cdr_is_sample_image); Bytes: always (after its length).
  bool cdr_is_image = false;
};

// At most this many CDR bytes come before a sample's own bytes.
inline constexpr std::size_t kMaxCdrImagePrefix = 8;

// When a sample of `size` bytes is, after a short prefix, its own CDR form
// (cdr_is_image; bytes topics always): writes that prefix (the header, and a
// bytes sample's length) and returns its size; else 0. The recorder then
// writes the sample from shared memory without encoding it.
[[nodiscard]] std::size_t cdr_image_prefix(
    const ChannelLayout& layout, std::size_t size,
    std::array<std::byte, kMaxCdrImagePrefix>& prefix) noexcept;

// The layout of `topic` (whose type must be known), from the configuration
// ferryd serves.
[[nodiscard]] ChannelLayout channel_layout(const config::Config& config,
                                           const discovery::TopicInfo& topic);

// CDR size of `sample` (bytes topics, and types with string<=N or T[<=N],
// vary per sample). Throws config::CdrError when a length in the sample is
// over its bound.
[[nodiscard]] std::uint64_t cdr_size(const config::Schema& schema, const ChannelLayout& layout,
                                     std::span<const std::byte> sample);

// Writes the CDR form of `sample` into `out` (exactly cdr_size() bytes).
// Throws config::CdrError when the sample's size does not match its type.
void encode(const config::Schema& schema, const ChannelLayout& layout,
            std::span<const std::byte> sample, std::span<std::byte> out);

// Reads the CDR form back into a sample. For Declared and Undeclared types
// `sample` is sample_size bytes; for Bytes the data is returned as a view
// of `cdr`. Throws config::CdrError naming what is wrong.
std::span<const std::byte> decode(const config::Schema& schema, const ChannelLayout& layout,
                                  std::span<const std::byte> cdr, std::span<std::byte> sample);

}  // namespace ferry::cli
