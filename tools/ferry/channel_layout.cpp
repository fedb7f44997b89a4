#include "channel_layout.hpp"

#include <cstring>
#include <limits>

#include "ferry/config/cdr.hpp"
#include "ferry/config/ros2msg.hpp"
#include "topic_type.hpp"

namespace ferry::cli {

namespace {
constexpr std::byte kCdrHeader[config::kCdrHeaderSize] = {std::byte{0x00}, std::byte{0x01},
                                                          std::byte{0x00}, std::byte{0x00}};
}  // namespace

ChannelLayout channel_layout(const config::Config& config, const discovery::TopicInfo& topic) {
  ChannelLayout layout;
  layout.ferry_type = topic.type_name;
  const TopicType type = resolve_type(config, topic);
  if (type.bytes) {
    layout.kind = ChannelLayout::Kind::Bytes;
    layout.schema_name = config::ros2_bytes_type_name();
    layout.definition = config::ros2msg_bytes_definition();
    layout.cdr_is_image = true;
    return layout;
  }
  layout.schema_name = config::ros2_type_name(topic.type_name);
  if (type.type != nullptr) {
    layout.kind = ChannelLayout::Kind::Declared;
    layout.type = *config.schema.index_of(topic.type_name);
    layout.schema_name = config::ros2_type_name(config.schema, layout.type);
    layout.definition = config::ros2msg_definition(config.schema, layout.type);
    layout.sample_size = type.type->size;
    layout.cdr_size = config::cdr_size(config.schema, layout.type);
    layout.cdr_is_image = config::cdr_is_sample_image(config.schema, layout.type);
    layout.variable = type.type->variable;
    return layout;
  }
  // As an opaque type: its bytes, copied as they are.
  layout.kind = ChannelLayout::Kind::Undeclared;
  layout.definition = "uint8[" + std::to_string(topic.sample_size) + "] data\n";
  layout.sample_size = topic.sample_size;
  layout.cdr_size = config::kCdrHeaderSize + topic.sample_size;
  layout.cdr_is_image = true;
  return layout;
}

std::size_t cdr_image_prefix(const ChannelLayout& layout, std::size_t size,
                             std::array<std::byte, kMaxCdrImagePrefix>& prefix) noexcept {
  std::memcpy(prefix.data(), kCdrHeader, sizeof kCdrHeader);
  if (layout.kind != ChannelLayout::Kind::Bytes) return layout.cdr_is_image ? sizeof kCdrHeader : 0;
  if (size > std::numeric_limits<std::uint32_t>::max()) return 0;
  const auto length = static_cast<std::uint32_t>(size);  // little-endian, as CDR here
  std::memcpy(prefix.data() + sizeof kCdrHeader, &length, sizeof length);
  return sizeof kCdrHeader + sizeof length;
}

std::uint64_t cdr_size(const config::Schema& schema, const ChannelLayout& layout,
                       std::span<const std::byte> sample) {
  if (layout.kind == ChannelLayout::Kind::Bytes) return config::cdr_bytes_size(sample.size());
  if (layout.variable) return config::cdr_size(schema, layout.type, sample);
  return layout.cdr_size;
}

void encode(const config::Schema& schema, const ChannelLayout& layout,
            std::span<const std::byte> sample, std::span<std::byte> out) {
  switch (layout.kind) {
    case ChannelLayout::Kind::Declared:
      config::cdr_encode(schema, layout.type, sample, out);
      return;
    case ChannelLayout::Kind::Bytes:
      config::cdr_encode_bytes(sample, out);
      return;
    case ChannelLayout::Kind::Undeclared:
      if (sample.size() != layout.sample_size || out.size() != layout.cdr_size)
        throw config::CdrError("a sample of type '" + layout.ferry_type + "' is " +
                               std::to_string(sample.size()) + " bytes; expected " +
                               std::to_string(layout.sample_size));
      std::memcpy(out.data(), kCdrHeader, sizeof kCdrHeader);
      std::memcpy(out.data() + sizeof kCdrHeader, sample.data(), sample.size());
      return;
  }
}

std::span<const std::byte> decode(const config::Schema& schema, const ChannelLayout& layout,
                                  std::span<const std::byte> cdr, std::span<std::byte> sample) {
  switch (layout.kind) {
    case ChannelLayout::Kind::Declared:
      config::cdr_decode(schema, layout.type, cdr, sample);
      return sample;
    case ChannelLayout::Kind::Bytes:
      return config::cdr_decode_bytes(cdr);
    case ChannelLayout::Kind::Undeclared:
      break;
  }
  if (cdr.size() != layout.cdr_size || std::memcmp(cdr.data(), kCdrHeader, sizeof kCdrHeader) != 0)
    throw config::CdrError("a CDR sample of type '" + layout.ferry_type + "' is " +
                           std::to_string(cdr.size()) +
                           " bytes or lacks the header 00 01 00 00; "
                           "expected " +
                           std::to_string(layout.cdr_size) + " bytes");
  std::memcpy(sample.data(), cdr.data() + sizeof kCdrHeader, layout.sample_size);
  return sample;
}

}  // namespace ferry::cli
