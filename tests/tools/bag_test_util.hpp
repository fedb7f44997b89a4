#pragma once
// Helpers for the MCAP tests: a temporary directory removed at the end, and
// a small recording through McapWriter with known contents.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ferry/bag/mcap_writer.hpp"
#include "ferry/config/cdr.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/ros2msg.hpp"
#include "temp_dir.hpp"

namespace bag_test {

using ferry::test::TempDir;

inline std::vector<std::byte> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

// Removes the file first: ext4 flushes a file truncated and rewritten in
// place on close, which makes hundreds of rewrites take seconds.
inline void write_all(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::filesystem::remove(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// The recording: topic "pose" (type geo/Pose, CDR of a struct with padding)
// and topic "log" (bytes), `count` messages each, alternating, log_time
// 1000 + i, sequence i.
struct Pose {
  std::uint8_t id;
  double x;
  bool ok;
};

inline const char* const kTypesYaml = R"(
types:
  geo/Pose:
    fields:
      - { name: id, type: u8 }
      - { name: x, type: f64 }
      - { name: ok, type: bool }
topics:
  - { name: pose, type: geo/Pose }
)";

inline std::vector<std::byte> pose_cdr(std::uint32_t i) {
  const auto config = ferry::config::load_string(kTypesYaml);
  Pose p{};
  p.id = static_cast<std::uint8_t>(i + 7);
  p.x = 0.25 + i * 0.5;
  p.ok = (i % 2) == 0;
  std::vector<std::byte> out;
  ferry::config::cdr_encode(config.schema, *config.schema.index_of("geo/Pose"),
                            std::as_bytes(std::span(&p, 1)), out);
  return out;
}

inline std::vector<std::byte> log_cdr(std::uint32_t i) {
  const std::string text = "line " + std::to_string(i);
  std::vector<std::byte> out;
  ferry::config::cdr_encode_bytes(std::as_bytes(std::span(text.data(), text.size())), out);
  return out;
}

// The ros2msg schema of kTypesYaml's geo/Pose, added to `writer`.
inline std::uint16_t add_pose_schema(ferry::bag::McapWriter& writer) {
  const auto config = ferry::config::load_string(kTypesYaml);
  const std::string msg =
      ferry::config::ros2msg_definition(config.schema, *config.schema.index_of("geo/Pose"));
  return writer.add_schema(ferry::config::ros2_type_name("geo/Pose"), "ros2msg",
                           std::as_bytes(std::span(msg)));
}

// A channel of CDR geo/Pose messages on `topic`, as ferry record writes a
// drop_oldest topic's.
inline std::uint16_t add_pose_channel(ferry::bag::McapWriter& writer, std::uint16_t pose_schema,
                                      const std::string& topic) {
  return writer.add_channel(pose_schema, topic, "cdr",
                            {{"ferry_type", "geo/Pose"}, {"policy", "drop_oldest"}});
}

inline void write_recording(const std::filesystem::path& path, ferry::bag::WriterOptions options,
                            std::uint32_t count) {
  ferry::bag::McapWriter writer(path, options);
  const std::string bytes_msg = ferry::config::ros2msg_bytes_definition();
  const auto pose_schema = add_pose_schema(writer);
  const auto bytes_schema = writer.add_schema(ferry::config::ros2_bytes_type_name(), "ros2msg",
                                              std::as_bytes(std::span(bytes_msg)));
  const auto pose = add_pose_channel(writer, pose_schema, "pose");
  const auto log = writer.add_channel(bytes_schema, "log", "cdr", {{"ferry_type", "bytes"}});
  for (std::uint32_t i = 0; i < count; ++i) {
    writer.write_message({pose, i, 1000 + 2ull * i, 900 + 2ull * i}, pose_cdr(i));
    const auto line = log_cdr(i);
    if (i % 2 == 0) {
      writer.write_message({log, i, 1001 + 2ull * i, 901 + 2ull * i}, line);
    } else {
      // As ferry record writes a large sample: its CDR prefix, then the
      // sample from where it lies (uncompressed: a chunk of its own).
      const std::span<const std::byte> all(line);
      writer.write_message({log, i, 1001 + 2ull * i, 901 + 2ull * i}, all.first(8), all.subspan(8));
    }
  }
  writer.add_metadata("ferry.record", {{"missed", "0"}});
  writer.close();
}

}  // namespace bag_test
