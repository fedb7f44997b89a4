// ferry's shipped ROS 2 messages (docs/messages.md) against the reference:
// field for field equal to ROS 2's definitions (@foxglove/rosmsg-msgs-common,
// ros2jazzy), ferry's CDR of each byte for byte what
// @foxglove/rosmsg2-serialization writes for the same values, and an MCAP
// recording of sensor_msgs/msg/Image (published by loan through the
// `ferry gen cpp` header, images of two sizes) decoded by that package with
// ROS 2's own definitions, not the schema text in the file.

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <ferry/ferry.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/config/cdr.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/ros2msg.hpp"
#include "hex.hpp"
#include "json_text.hpp"
#include "sensor_msgs.hpp"
#include "test_domain.hpp"

using namespace ferry::config;
using Json = nlohmann::ordered_json;

namespace {

using ferry::test::hex;

template <class T>
void store(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}

// Writes deterministic values into a sample of a shipped type and returns
// them as the JSON the reference serializer takes.
class Filler {
 public:
  explicit Filler(const Schema& schema) : schema_(schema) {}

  Json fill(const Type& type, std::byte* base) {
    Json out = Json::object();
    for (const Field& f : type.fields) out[f.name] = field(f, base + f.offset);
    return out;
  }

 private:
  Json scalar(Scalar s, std::byte* at) {
    const std::uint32_t k = next_++;
    switch (s) {
      case Scalar::Bool:
        store<std::uint8_t>(at, k % 2);
        return k % 2 == 1;
      case Scalar::I8:
        store<std::int8_t>(at, static_cast<std::int8_t>(-(k % 100)));
        return -static_cast<int>(k % 100);
      case Scalar::U8:
        store<std::uint8_t>(at, static_cast<std::uint8_t>(k % 251));
        return k % 251;
      case Scalar::I16:
        store<std::int16_t>(at, static_cast<std::int16_t>(-static_cast<int>(k)));
        return -static_cast<int>(k);
      case Scalar::U16:
        store<std::uint16_t>(at, static_cast<std::uint16_t>(k));
        return k;
      case Scalar::I32:
        store<std::int32_t>(at, -static_cast<std::int32_t>(k) * 1000);
        return -static_cast<std::int32_t>(k) * 1000;
      case Scalar::U32:
        store<std::uint32_t>(at, k * 1000);
        return k * 1000;
      case Scalar::F32:
        store<float>(at, static_cast<float>(k) + 0.25f);
        return static_cast<double>(k) + 0.25;
      case Scalar::F64:
        store<double>(at, static_cast<double>(k) + 0.125);
        return static_cast<double>(k) + 0.125;
      case Scalar::I64:
      case Scalar::U64:
        break;  // no shipped type has them (JSON would need BigInt)
    }
    FAIL("unexpected scalar");
    return nullptr;
  }

  Json element(const Field& f, std::byte* at) {
    if (f.kind == FieldKind::Nested) return fill(schema_.type(f.nested), at);
    return scalar(f.scalar, at);
  }

  Json field(const Field& f, std::byte* at) {
    if (f.kind == FieldKind::BoundedString) {
      const std::string text = "frame_" + std::to_string(next_++);
      store<std::uint32_t>(at, static_cast<std::uint32_t>(text.size()));
      std::memcpy(at + f.data_offset, text.data(), text.size());
      return text;
    }
    if (!f.is_array && !f.sequence) return element(f, at);
    std::uint64_t count = f.count;
    if (f.sequence) {
      count = 2 + next_ % 3;
      store<std::uint32_t>(at, static_cast<std::uint32_t>(count));
      at += f.data_offset;
    }
    Json items = Json::array();
    for (std::uint64_t i = 0; i < count; ++i) items.push_back(element(f, at + i * f.element_size));
    return items;
  }

  const Schema& schema_;
  std::uint32_t next_ = 1;
};

const char* const kShipped[] = {"builtin_interfaces/msg/Time",
                                "builtin_interfaces/msg/Duration",
                                "std_msgs/msg/Header",
                                "geometry_msgs/msg/Point",
                                "geometry_msgs/msg/Vector3",
                                "geometry_msgs/msg/Quaternion",
                                "geometry_msgs/msg/Pose",
                                "geometry_msgs/msg/PoseStamped",
                                "geometry_msgs/msg/Twist",
                                "geometry_msgs/msg/Transform",
                                "geometry_msgs/msg/TransformStamped",
                                "sensor_msgs/msg/Image",
                                "sensor_msgs/msg/CompressedImage",
                                "sensor_msgs/msg/Imu",
                                "sensor_msgs/msg/LaserScan",
                                "sensor_msgs/msg/PointField",
                                "sensor_msgs/msg/PointCloud2",
                                "sensor_msgs/msg/CameraInfo",
                                "sensor_msgs/msg/RegionOfInterest"};

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("ferry-msgs-" + std::to_string(::getpid()) + "-" + name);
}

std::vector<Json> run_messages_js(const ferry::test::TestDomain& domain,
                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FERRY_NODE, std::string(FERRY_MCAP_READER_DIR) + "/messages.js"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = ferry::test::run_program(domain, argv, std::chrono::seconds(60));
  INFO("messages.js stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<Json> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("the shipped definitions equal ROS 2's, and their CDR the reference serializer's") {
  ferry::test::TestDomain domain;
  const Config c = load_string("include: [sensor_msgs.yaml]\n", "<shipped>");
  Json cases = Json::array();
  for (const char* name : kShipped) {
    const auto index = c.schema.index_of(name);
    REQUIRE_MESSAGE(index, name);
    const Type& type = c.schema.type(*index);
    std::vector<std::byte> sample(type.size);
    Filler filler(c.schema);
    Json value = filler.fill(type, sample.data());
    std::vector<std::byte> cdr;
    cdr_encode(c.schema, *index, sample, cdr);
    // Back through ferry's decoder: the same sample.
    std::vector<std::byte> back(type.size);
    cdr_decode(c.schema, *index, cdr, back);
    std::vector<std::byte> again;
    cdr_encode(c.schema, *index, back, again);
    CHECK_MESSAGE(again == cdr, name);
    cases.push_back(Json{{"ros2", name},
                         {"definition", ros2msg_definition(c.schema, *index)},
                         {"value", std::move(value)},
                         {"cdr", hex(cdr)}});
  }
  const auto file = temp_file("cases.json");
  std::ofstream(file) << ferry::test::json_text(cases);
  const auto results = run_messages_js(domain, {file.string()});
  std::filesystem::remove(file);
  REQUIRE(results.size() == std::size(kShipped));
  for (const Json& r : results) {
    INFO(ferry::test::json_text(r));
    CHECK(r["ok"] == true);
  }
}

namespace {

constexpr std::uint32_t kImages = 6;

// Two sizes: 640x480 and 1920x1080 RGB8, by loan.
void fill_image(sensor_msgs::msg::Image& img, std::uint32_t i) {
  const bool big = i % 2 == 1;
  img.header.stamp.sec = static_cast<std::int32_t>(100 + i);
  img.header.stamp.nanosec = 500u + i;
  REQUIRE(img.header.frame_id.assign("camera_" + std::to_string(i)));
  img.width = big ? 1920 : 640;
  img.height = big ? 1080 : 480;
  REQUIRE(img.encoding.assign("rgb8"));
  img.is_bigendian = 0;
  img.step = img.width * 3;
  REQUIRE(img.data.resize_for_overwrite(std::size_t{img.step} * img.height));
  auto pixels = img.data.span();
  for (std::size_t p = 0; p < pixels.size(); ++p)
    pixels[p] = static_cast<std::uint8_t>((p * 31 + i) & 0xFF);
}

std::string image_config(const std::filesystem::path& dir) {
  (void)dir;
  return "include: [sensor_msgs.yaml]\n"
         "pool: [{ chunk_size: 24MiB, count: 12 }]\n"
         "topics:\n"
         "  - { name: camera/image, type: sensor_msgs/msg/Image, capacity: 4, policy: block,\n"
         "      max_subscribers: 2 }\n";
}

}  // namespace

TEST_CASE("an MCAP recording of sensor_msgs/msg/Image decodes with ROS 2's own definitions") {
  ferry::test::TestDomain domain;
  ferry::test::Daemon daemon(domain, image_config({}));
  ferry::test::use_domain_env(domain);
  const auto file = temp_file("image.mcap");
  ferry::test::Child publisher([] {
    ferry::Node node{"camera"};
    auto pub = node.publisher<sensor_msgs::msg::Image>("camera/image");
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pub.subscriber_count() == 0 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (std::uint32_t i = 0; i < kImages; ++i) {
      auto loan = pub.loan();
      if (!loan) return 2;
      fill_image(**loan, i);
      if (pub.publish(std::move(*loan)).delivered != 1) return 1;
    }
    return 0;
  });
  const auto r = ferry::test::run_program(domain,
                                          {ferry::test::bin_path("ferry"), "record", "camera/image",
                                           "-o", file.string(), "--count", std::to_string(kImages)},
                                          std::chrono::seconds(30));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(publisher.wait() == 0);
  const auto results = run_messages_js(domain, {"--mcap", file.string()});
  std::filesystem::remove(file);
  REQUIRE(results.size() == kImages);
  for (std::uint32_t i = 0; i < kImages; ++i) {
    const Json& m = results[i];
    INFO(ferry::test::json_text(m).substr(0, 400));
    CHECK(m["schema_name"] == "sensor_msgs/msg/Image");
    const bool big = i % 2 == 1;
    CHECK(m["header"]["stamp"]["sec"] == 100 + i);
    CHECK(m["header"]["stamp"]["nanosec"] == 500 + i);
    CHECK(m["header"]["frame_id"] == "camera_" + std::to_string(i));
    CHECK(m["width"] == (big ? 1920 : 640));
    CHECK(m["height"] == (big ? 1080 : 480));
    CHECK(m["encoding"] == "rgb8");
    CHECK(m["data_size"] == (big ? 1920 * 1080 * 3 : 640 * 480 * 3));
    // The pixels as written: a checksum computed the same way on both sides.
    std::uint64_t sum = 0;
    const std::size_t n = big ? 1920 * 1080 * 3 : 640 * 480 * 3;
    for (std::size_t p = 0; p < n; ++p) sum += ((p * 31 + i) & 0xFF) * (p % 7 + 1);
    CHECK(m["data_sum"] == sum);
  }
}
