// ferry bridge with ROS 2's own types (docs/bridge.md): a ferry topic of type
// sensor_msgs/msg/Image (the shipped definitions, bounded string and
// sequence) and a plain Cyclone DDS program built with idlc from ROS 2's IDL
// of Image (ros2_image_peer: unbounded string and sequence<uint8>, type
// sensor_msgs::msg::dds_::Image_ on rt/<topic>) exchange images of two sizes
// both ways, pixels checked; an image over the ferry bound is counted
// too_large. And an import whose DDS writer offers less durability than
// the topic's history asks for is reported by name and policy, and adapts.
#include <doctest/doctest.h>

#include <ferry/ferry.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "bridge_harness.hpp"
#include "daemon_fixture.hpp"
#include "image_pattern.hpp"

using namespace std::chrono_literals;
using ferry::test::Background;

namespace {

// 24 MiB chunks hold an Image at its bound (4K RGB, docs/messages.md).
const char* const kYaml = R"(include: [sensor_msgs.yaml]
liveness: { heartbeat_ms: 100, timeout_ms: 2000 }
pool:
  - { chunk_size: 4KiB, count: 64 }
  - { chunk_size: 24MiB, count: 12 }
topics:
  - { name: camera/out, type: sensor_msgs/msg/Image, capacity: 4, policy: block,
      block_timeout_ms: 5000 }
  - { name: camera/in, type: sensor_msgs/msg/Image, capacity: 4, policy: block,
      block_timeout_ms: 5000 }
  - { name: camera/latest, type: sensor_msgs/msg/Image, capacity: 2, policy: drop_oldest,
      history: 1 }
  - { name: camera/latched, type: sensor_msgs/msg/Image, capacity: 2, policy: block,
      history: 1 }
  - { name: camera/sensor, type: sensor_msgs/msg/Image, capacity: 2, policy: drop_oldest }
)";

constexpr std::uint32_t kImages = 4;         // 640x480 and 1920x1080, alternately
constexpr std::uint32_t kBound = 24883200;   // Image.data's bound
constexpr std::uint32_t kPeerTimeoutS = 20;  // how long the receiving peer waits

struct Machines {
  ferry::test::NetPair net;
  ferry::test::TestDomain a;
  ferry::test::Daemon da{a, kYaml};

  std::unique_ptr<Background> bridge(std::vector<std::string> args) {
    std::vector<std::string> argv{
        ferry::test::bin_path("ferry"),  "bridge", "--stats", "1", "--dds-domain",
        std::to_string(net.dds_domain())};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Background>(a, net.on(0, argv));
  }
  // The ROS 2-typed Cyclone program, on the other machine.
  std::unique_ptr<Background> peer(std::vector<std::string> args) {
    args.insert(args.begin(), ferry::test::bin_path("../tests/bridge_ros2_image_peer"));
    return std::make_unique<Background>(a, net.on(1, args),
                                        std::vector<std::pair<std::string, std::string>>{
                                            {"DDS_PEER_DOMAIN", std::to_string(net.dds_domain())}});
  }
};

bool imports_reach(const Background& bridge, const std::string& topic, int n) {
  return bridge.wait_for("'" + topic + "' (import): " + std::to_string(n) + " local subscriber(s)",
                         8s);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string size_text(std::uint32_t i) {
  return std::to_string(image_test::width_of(i)) + "x" + std::to_string(image_test::height_of(i));
}

// Takes images first .. first+n-1 and checks each, pixels too.
void expect_images(ferry::Subscriber<sensor_msgs::msg::Image>& sub, std::uint32_t first,
                   std::uint32_t n) {
  for (std::uint32_t i = first; i < first + n; ++i) {
    auto s = sub.take(10s);
    REQUIRE_MESSAGE(s.has_value(), "image " << i << " did not arrive");
    CHECK_MESSAGE(image_test::check(**s, i) == "", "image " << i);
  }
}

}  // namespace

TEST_CASE(
    "sensor_msgs/msg/Image crosses between ferry and a Cyclone program built from ROS 2's IDL, "
    "both ways, and an image over the bound is counted too_large") {
  Machines m;
  // Forked before this process has a node (see test_bridge.cpp): publishes
  // the images by loan once the file `go` exists.
  const auto go = m.a.runtime_dir() / "go";
  ferry::test::Child publisher([&] {
    ferry::test::use_domain_env(m.a);
    ferry::Node node{"camera"};
    auto pub = node.publisher<sensor_msgs::msg::Image>("camera/out");
    if (!pub.wait_for_subscribers(1, 10s)) return 3;
    if (!ferry::test::eventually([&] { return std::filesystem::exists(go); }, 20s)) return 4;
    for (std::uint32_t i = 0; i < kImages; ++i) {
      auto loan = pub.loan();
      if (!loan || !image_test::fill(**loan, i)) return 5;
      if (pub.publish(std::move(*loan)).delivered != 1) return 6;
    }
    return 0;
  });
  auto bridge = m.bridge({"--export", "camera/out", "--import", "camera/in"});
  INFO("bridge: " << bridge->err());
  auto receiver =
      m.peer({"recv", "camera/out", std::to_string(kImages), std::to_string(kPeerTimeoutS)});
  // ferry -> DDS: once the peer's reader matched the bridge's writer.
  REQUIRE(bridge->wait_for("'rt/camera/out' (export): 1 DDS reader(s) matched", 10s));
  std::ofstream{go}.put('1');
  CHECK(publisher.wait(20s) == 0);
  REQUIRE(receiver->wait(std::chrono::seconds(kPeerTimeoutS + 5)) == 0);
  const auto got = lines(receiver->out());
  REQUIRE(got.size() == kImages);
  for (std::uint32_t i = 0; i < kImages; ++i)
    CHECK(got[i] == "image " + std::to_string(i) + " " + size_text(i) + " ok");

  // DDS -> ferry: images of both sizes, then one over the bound (dropped,
  // counted) and one more that fits.
  ferry::test::use_domain_env(m.a);
  ferry::Node node{"viewer"};
  auto sub = node.subscriber<sensor_msgs::msg::Image>("camera/in");
  REQUIRE(imports_reach(*bridge, "camera/in", 1));
  auto sender = m.peer({"send", "camera/in", "0", std::to_string(kImages)});
  expect_images(sub, 0, kImages);
  CHECK(sender->wait(10s) == 0);
  auto over =
      m.peer({"send-over", "camera/in", std::to_string(kBound + 1), std::to_string(kImages)});
  expect_images(sub, kImages, 1);
  CHECK(over->wait(20s) == 0);
  CHECK_FALSE(sub.take(100ms).has_value());
  CHECK(bridge->err().find("dropped a DDS sample too large for the ferry type") !=
        std::string::npos);
  CHECK(bridge->err().find("has length " + std::to_string(kBound + 1) + " at offset") !=
        std::string::npos);

  CHECK(bridge->interrupt() == 0);
  const std::string out = bridge->out();
  CHECK(out.find("at exit: camera/out: exported " + std::to_string(kImages) + " imported 0") !=
        std::string::npos);
  CHECK(out.find("at exit: camera/in: exported 0 imported " + std::to_string(kImages + 1) +
                 " echoes_skipped 0 undecodable 0 not_published 0 write_failed 0 too_large 1") !=
        std::string::npos);
}

TEST_CASE(
    "an import whose DDS writer offers VOLATILE for a history topic reports the policy by name "
    "and adapts its durability, so that the samples flow") {
  Machines m;
  // history: 1 -> the imports' readers request TRANSIENT_LOCAL; the peers'
  // writers offer VOLATILE. One import runs on Cyclone's receive thread
  // (drop_oldest), the other on a thread of its own (block).
  auto bridge = m.bridge({"--import", "camera/latest", "--import", "camera/latched"});
  INFO("bridge: " << bridge->err());
  ferry::test::use_domain_env(m.a);
  ferry::Node node{"viewer"};
  auto latest = node.subscriber<sensor_msgs::msg::Image>("camera/latest");
  auto latched = node.subscriber<sensor_msgs::msg::Image>("camera/latched");
  REQUIRE(imports_reach(*bridge, "camera/latest", 1));
  REQUIRE(imports_reach(*bridge, "camera/latched", 1));
  // Each waits until the import's (adapted) reader matched its writer.
  auto to_latest = m.peer({"send", "camera/latest", "0", "1"});
  auto to_latched = m.peer({"send", "camera/latched", "0", "2"});
  expect_images(latest, 0, 1);
  expect_images(latched, 0, 2);
  CHECK(to_latest->wait(10s) == 0);
  CHECK(to_latched->wait(10s) == 0);
  for (const std::string topic : {"camera/latest", "camera/latched"}) {
    CHECK(bridge->err().find("import '" + topic + "': a DDS writer on 'rt/" + topic +
                             "' offers incompatible QoS; no samples come from it (1 so far). "
                             "Last incompatible policy: DURABILITY_QOS_POLICY") !=
          std::string::npos);
    CHECK(bridge->err().find("import '" + topic + "' now requests VOLATILE durability") !=
          std::string::npos);
  }
  CHECK(bridge->interrupt() == 0);
  CHECK(bridge->out().find("at exit: camera/latched: exported 0 imported 2") != std::string::npos);
}

TEST_CASE(
    "an import whose DDS writer is BEST_EFFORT reports the policy by name and adapts its "
    "reliability, so that the samples flow") {
  Machines m;
  auto bridge = m.bridge({"--import", "camera/sensor"});
  INFO("bridge: " << bridge->err());
  ferry::test::use_domain_env(m.a);
  ferry::Node node{"viewer"};
  auto sub = node.subscriber<sensor_msgs::msg::Image>("camera/sensor");
  REQUIRE(imports_reach(*bridge, "camera/sensor", 1));
  // Best effort may lose an image: the peer sends image 0 until stopped.
  auto peer = m.peer({"stream", "camera/sensor", "20"});
  expect_images(sub, 0, 1);
  CHECK(bridge->err().find("import 'camera/sensor': a DDS writer on 'rt/camera/sensor' offers "
                           "incompatible QoS; no samples come from it (1 so far). Last "
                           "incompatible policy: RELIABILITY_QOS_POLICY") != std::string::npos);
  CHECK(bridge->err().find("import 'camera/sensor' now requests BEST_EFFORT reliability") !=
        std::string::npos);
  CHECK(bridge->interrupt() == 0);
}
