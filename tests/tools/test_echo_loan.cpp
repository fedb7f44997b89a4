// `ferry topic echo` of samples that travel through the pool: written in
// place into a loan (a small type) and a type larger than a ring slot, each
// decoded field by field with the topic's YAML type.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "json_text.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using nlohmann::json;

struct Pose {
  std::uint64_t stamp_ns;
  double x, y;
  char frame[16];
};
FERRY_TYPE(Pose);

// Above the 4 KiB inline limit: always a pool chunk.
struct Shot {
  std::uint64_t id;
  double exposure;
  char tag[8];
  std::uint8_t pixels[6000];
  std::uint64_t last;  // past the first 6 KiB of the chunk
};
FERRY_TYPE(Shot);

namespace {

// Pose: tests/support/pose_frame.yaml's.
const std::string kConfig = "include: [" + support_path("pose_frame.yaml") +
                            "]\n"
                            "types:\n"
                            "  Shot:\n"
                            "    fields:\n"
                            "      - { name: id, type: u64 }\n"
                            "      - { name: exposure, type: f64 }\n"
                            "      - { name: tag, type: \"char[8]\" }\n"
                            "      - { name: pixels, type: \"u8[6000]\" }\n"
                            "      - { name: last, type: u64 }\n"
                            "topics:\n"
                            "  - { name: pose, type: Pose }\n"
                            "  - { name: shots, type: Shot, capacity: 4 }\n";

}  // namespace

TEST_CASE("topic echo shows a loaned sample's values, small and larger than a slot") {
  ServedConfig served(kConfig);
  ferry::Node node{"lender"};
  auto poses = node.publisher<Pose>("pose");
  auto shots = node.publisher<Shot>("shots");
  Background pose_yaml(served.domain, {bin_path("ferry"), "topic", "echo", "pose", "--count", "1"});
  Background pose_json(served.domain,
                       {bin_path("ferry"), "topic", "echo", "pose", "--count", "1", "--json"});
  Background shot_json(served.domain,
                       {bin_path("ferry"), "topic", "echo", "shots", "--count", "1", "--json"});
  REQUIRE(eventually([&] { return poses.observer_count() == 2 && shots.observer_count() == 1; }));

  auto pose = poses.loan();
  REQUIRE(pose.has_value());
  **pose = Pose{123456789, 1.5, -2.25, {}};
  std::strcpy((*pose)->frame, "map");
  CHECK(poses.publish(std::move(*pose)).error == std::nullopt);

  auto shot = shots.loan();
  REQUIRE(shot.has_value());
  (*shot)->id = 42;
  (*shot)->exposure = 0.125;
  std::memset((*shot)->tag, 0, sizeof(Shot::tag));
  std::strcpy((*shot)->tag, "cam0");
  for (std::size_t i = 0; i < sizeof(Shot::pixels); ++i) {
    (*shot)->pixels[i] = static_cast<std::uint8_t>(i % 251);
  }
  (*shot)->last = 0xFEEDFACECAFEBEEFULL;
  CHECK(shots.publish(std::move(*shot)).error == std::nullopt);

  REQUIRE(pose_json.wait() == 0);
  const json p = ferry::test::parse_json(pose_json.out());
  CHECK(p["stamp_ns"] == 123456789);
  CHECK(p["x"] == 1.5);
  CHECK(p["y"] == -2.25);
  CHECK(p["frame"] == "map");

  REQUIRE(pose_yaml.wait() == 0);
  const std::string text = pose_yaml.out();
  CHECK(text.find("stamp_ns: 123456789\n") != std::string::npos);
  CHECK(text.find("x: 1.5\n") != std::string::npos);
  CHECK(text.find("y: -2.25\n") != std::string::npos);
  CHECK(text.find("frame: \"map\"\n") != std::string::npos);

  REQUIRE(shot_json.wait() == 0);
  const json s = ferry::test::parse_json(shot_json.out());
  CHECK(s["id"] == 42);
  CHECK(s["exposure"] == 0.125);
  CHECK(s["tag"] == "cam0");
  // A u8 array shows as its size and the hex of its first 32 bytes.
  CHECK(s["pixels"]["size"] == sizeof(Shot::pixels));
  CHECK(s["pixels"]["hex"] == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  CHECK(s["last"] == 0xFEEDFACECAFEBEEFULL);
}
