// The figures of docs/bridge.md ("What it costs"): ferry -> bridge -> DDS ->
// bridge -> ferry against a plain Cyclone DDS publisher/subscriber pair
// (dds_peer) with the same types, over the same veth pair. Not a ctest test:
//   build/tests/bridge_measure            (root: namespaces; else loopback)
//   BRIDGE_MEASURE_FRAMES=0 build/tests/bridge_measure    (64 B only)
//   build/tests/bridge_measure --test-case='measure: export cost*'
// 64 B round trips run four ways: the bridges as they start by default and
// with `--export-spin-us 50`, each with the ferry ends' take(timeout)
// spinning first (ferry's default) and asleep at once (take_spin 0, as the
// Cyclone peer waits in a waitset).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ferry/ferry.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bridge_harness.hpp"
#include "bridge_types.hpp"
#include "cdr_write.hpp"
#include "daemon_fixture.hpp"
#include "dds_entity.hpp"
#include "dds_type.hpp"
#include "ferry/config/load.hpp"
#include "qos.hpp"
#include "sensor_msgs.hpp"

using namespace std::chrono_literals;
using ferry::test::Background;
using ferry::test::Frame;
using ferry::test::Small;

namespace {

constexpr int kRounds = 2000;          // 64 B round trips
constexpr int kFrameRounds = 100;      // 1080p round trips
constexpr int kSeconds = 4;            // each throughput run
constexpr const char* kSpinUs = "50";  // the --export-spin-us measured

// How the bridges run: their extra arguments.
using BridgeArgs = std::vector<std::string>;
const BridgeArgs kSleeping{};
const BridgeArgs kSpinning{"--export-spin-us", kSpinUs};

// The ferry ends of a round trip: take(timeout) as ferry's default (spin,
// then sleep) or asleep at once.
ferry::NodeOptions end_options(bool spin) {
  ferry::NodeOptions o;
  if (!spin) o.take_spin = 0;
  return o;
}

struct World {
  ferry::test::NetPair net;
  ferry::test::TestDomain a, b;
  ferry::test::Daemon da{a, ferry::test::bridge_yaml()};
  ferry::test::Daemon db{b, ferry::test::bridge_yaml()};
  const ferry::test::TestDomain& domain(int side) const { return side == 0 ? a : b; }
  std::unique_ptr<Background> bridge(int side, std::vector<std::string> args) {
    std::vector<std::string> argv{
        ferry::test::bin_path("ferry"),  "bridge", "--stats", "100", "--dds-domain",
        std::to_string(net.dds_domain())};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<Background>(domain(side), net.on(side, argv));
  }
  std::unique_ptr<Background> peer(int side, std::vector<std::string> args) {
    args.insert(args.begin(), ferry::test::bin_path("../tests/bridge_dds_peer"));
    return std::make_unique<Background>(domain(side), net.on(side, args),
                                        std::vector<std::pair<std::string, std::string>>{
                                            {"DDS_PEER_DOMAIN", std::to_string(net.dds_domain())}});
  }
};

// The 1-minute load average, from /proc/loadavg (-1 when unreadable).
double load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1;
  double load = -1;
  if (std::fscanf(f, "%lf", &load) != 1) load = -1;
  std::fclose(f);
  return load;
}

double number_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + key.size());
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

// ferry round trips through two bridges: T on `ping` from A, echoed on
// `pong` by B. Returns the one-way p50 in ns.
template <class T>
double bridged_p50(World& w, const char* ping, const char* pong, int rounds,
                   const BridgeArgs& args = kSleeping, bool ends_spin = true) {
  BridgeArgs a{"--export", ping, "--import", pong}, b{"--import", ping, "--export", pong};
  a.insert(a.end(), args.begin(), args.end());
  b.insert(b.end(), args.begin(), args.end());
  auto bridge_a = w.bridge(0, a);
  auto bridge_b = w.bridge(1, b);
  REQUIRE(bridge_a->wait_for("1 DDS reader(s) matched", 8s));
  REQUIRE(bridge_b->wait_for("1 DDS reader(s) matched", 8s));
  ferry::test::Child echo([&w, ping, pong, ends_spin] {
    ferry::test::use_domain_env(w.b);
    ferry::Node node{"measure-pong", end_options(ends_spin)};
    auto in = node.subscriber<T>(ping);
    auto out = node.publisher<T>(pong);
    const auto end = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < end) {
      auto s = in.take(100ms);
      if (!s) continue;
      auto loan = out.loan();
      if (!loan) continue;
      (*loan)->stamp_ns = s->get()->stamp_ns;
      (void)out.publish(std::move(*loan));
    }
    return 0;
  });
  ferry::test::use_domain_env(w.a);
  ferry::Node node{"measure-ping", end_options(ends_spin)};
  auto out = node.publisher<T>(ping);
  auto in = node.subscriber<T>(pong);
  REQUIRE(ferry::test::eventually(
      [&] { return out.subscriber_count() > 0 && in.publisher_count() > 0; }, 5s));
  std::vector<std::uint64_t> rtt;
  for (int i = -20; i < rounds; ++i) {
    const std::uint64_t t0 = now_ns();
    auto loan = out.loan();
    REQUIRE(loan.has_value());
    (*loan)->stamp_ns = t0;
    (void)out.publish(std::move(*loan));
    // A lost round (first ones, while DDS matches) is retried by the next.
    while (auto s = in.take(1s)) {
      if (s->get()->stamp_ns == t0) {
        if (i >= 0) rtt.push_back(now_ns() - t0);
        break;
      }
    }
  }
  echo.kill(SIGKILL);
  std::sort(rtt.begin(), rtt.end());
  REQUIRE(!rtt.empty());
  return static_cast<double>(rtt[rtt.size() / 2]) / 2;
}

// ferry samples per second from A to B through two bridges (block topic).
template <class T>
double bridged_rate(World& w, const char* topic, int seconds, const BridgeArgs& args = kSleeping) {
  BridgeArgs a{"--export", topic};
  a.insert(a.end(), args.begin(), args.end());
  auto bridge_a = w.bridge(0, a);
  auto bridge_b = w.bridge(1, {"--import", topic});
  REQUIRE(bridge_a->wait_for("1 DDS reader(s) matched", 8s));
  ferry::test::use_domain_env(w.b);
  ferry::Node node{"measure-sink"};
  auto in = node.subscriber<T>(topic);
  ferry::test::Child flood([&w, topic, seconds] {
    ferry::test::use_domain_env(w.a);
    ferry::Node n{"measure-flood"};
    auto out = n.publisher<T>(topic);
    if (!out.wait_for_subscribers(1, 5s)) return 3;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < end) {
      auto loan = out.loan();
      if (!loan) continue;
      (void)out.publish(std::move(*loan));
    }
    return 0;
  });
  std::uint64_t got = 0, first = 0, last = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds + 2);
  while (std::chrono::steady_clock::now() < end) {
    if (auto s = in.take(100ms)) {
      if (got++ == 0) first = now_ns();
      last = now_ns();
    }
  }
  CHECK(flood.wait(5s) == 0);
  return got > 1 ? static_cast<double>(got - 1) / (static_cast<double>(last - first) / 1e9) : 0;
}

}  // namespace

TEST_CASE("measure: bridge end to end against plain Cyclone DDS") {
  World w;
  std::printf("network: %s\n", w.net.isolated() ? "two namespaces over a veth pair" : "loopback");
  std::printf("load average at start: %.2f\n", load_average());

  // Plain Cyclone: the same types, one DDS hop, no ferry.
  double dds_p50 = 0, dds_rate = 0, dds_frame_p50 = 0, dds_fps = 0;
  {
    auto pong = w.peer(1, {"pong", "small", "60"});
    auto ping = w.peer(0, {"ping", "small", std::to_string(kRounds)});
    REQUIRE(ping->wait(60s) == 0);
    dds_p50 = number_after(ping->out(), "p50_one_way_ns ");
  }
  const char* frames_env = std::getenv("BRIDGE_MEASURE_FRAMES");
  const bool frames = frames_env == nullptr || std::string(frames_env) != "0";
  if (frames) {
    auto pong = w.peer(1, {"pong", "frame", "60"});
    auto ping = w.peer(0, {"ping", "frame", std::to_string(kFrameRounds)});
    REQUIRE(ping->wait(60s) == 0);
    dds_frame_p50 = number_after(ping->out(), "p50_one_way_ns ");
  }
  {
    auto sink = w.peer(1, {"sink", "small", std::to_string(kSeconds + 2)});
    auto flood = w.peer(0, {"flood", "small", std::to_string(kSeconds)});
    REQUIRE(sink->wait(30s) == 0);
    dds_rate = number_after(sink->out(), "per_s ");
  }
  if (frames) {
    auto sink = w.peer(1, {"sink", "frame", std::to_string(kSeconds + 2)});
    auto flood = w.peer(0, {"flood", "frame", std::to_string(kSeconds)});
    REQUIRE(sink->wait(30s) == 0);
    dds_fps = number_after(sink->out(), "per_s ");
  }

  const double bridge_p50 = bridged_p50<Small>(w, "bench/ping", "bench/pong", kRounds);
  const double asleep_p50 =
      bridged_p50<Small>(w, "bench/ping", "bench/pong", kRounds, kSleeping, false);
  const double spin_p50 = bridged_p50<Small>(w, "bench/ping", "bench/pong", kRounds, kSpinning);
  const double spin_asleep_p50 =
      bridged_p50<Small>(w, "bench/ping", "bench/pong", kRounds, kSpinning, false);
  const double bridge_rate = bridged_rate<Small>(w, "bench/flood", kSeconds);
  const double spin_rate = bridged_rate<Small>(w, "bench/flood", kSeconds, kSpinning);

  const auto p50_row = [&](const char* how, double p50) {
    std::printf("64 B   one-way p50%s: bridge %.1f us, plain Cyclone %.1f us (%.2fx)\n", how,
                p50 / 1e3, dds_p50 / 1e3, p50 / dds_p50);
  };
  p50_row("", bridge_p50);
  p50_row(", ends take_spin 0", asleep_p50);
  p50_row(", --export-spin-us 50", spin_p50);
  p50_row(", --export-spin-us 50, ends take_spin 0", spin_asleep_p50);
  std::printf("64 B   throughput:  bridge %.0f/s, plain Cyclone %.0f/s (%.2fx)\n", bridge_rate,
              dds_rate, bridge_rate / dds_rate);
  std::printf("64 B   throughput, --export-spin-us 50: bridge %.0f/s (%.2fx)\n", spin_rate,
              spin_rate / dds_rate);
  if (frames) {
    const double bridge_frame_p50 =
        bridged_p50<Frame>(w, "bench/fping", "bench/fpong", kFrameRounds);
    const double bridge_fps = bridged_rate<Frame>(w, "bridge/frames", kSeconds);
    std::printf("1080p  one-way p50: bridge %.2f ms, plain Cyclone %.2f ms (%.2fx)\n",
                bridge_frame_p50 / 1e6, dds_frame_p50 / 1e6, bridge_frame_p50 / dds_frame_p50);
    std::printf("1080p  frames/s:    bridge %.1f, plain Cyclone %.1f (%.2fx)\n", bridge_fps,
                dds_fps, bridge_fps / dds_fps);
  }
  std::printf("load average at end: %.2f\n", load_average());
}

// What an exporter spends per sample of a type with bounded fields: ferry's
// codec, then Cyclone's copy into its message (cdr_write.hpp), against the
// fixed-size Frame of the same size that Cyclone serializes in place. One
// process, a writer and a reader of each topic on one participant.
//   build/tests/bridge_measure --test-case='measure: export cost*'
TEST_CASE("measure: export cost of an Image against a fixed-size frame") {
  const auto config = ferry::config::load_string(
      "include: [sensor_msgs.yaml]\npool: [{ chunk_size: 32MiB, count: 1 }]\n"
      "types:\n  Frame:\n    fields:\n      - { name: stamp_ns, type: u64 }\n"
      "      - { name: width, type: u32 }\n      - { name: height, type: u32 }\n"
      "      - { name: pixels, type: \"u8[3110400]\" }\n"
      "topics:\n  - { name: camera/image, type: sensor_msgs/msg/Image, capacity: 2 }\n");
  const auto image_index = *config.schema.index_of("sensor_msgs/msg/Image");
  const ferry::bridge::DdsType image_type(config.schema, image_index);
  const ferry::bridge::DdsType frame_type(config.schema, *config.schema.index_of("Frame"));
  ferry::test::NetPair net;  // only for a DDS domain id of its own
  const ferry::bridge::DdsEntity pp(dds_create_participant(net.dds_domain(), nullptr, nullptr),
                                    "participant");
  const ferry::bridge::QosPtr q(dds_create_qos());
  dds_qset_reliability(q.get(), DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(q.get(), DDS_HISTORY_KEEP_LAST, 2);
  const auto endpoints = [&](const ferry::bridge::DdsType& type, const char* name) {
    const dds_entity_t topic =
        dds_create_topic(pp.get(), type.descriptor(), name, q.get(), nullptr);
    (void)dds_create_reader(pp.get(), topic, q.get(), nullptr);
    return dds_create_writer(pp.get(), topic, q.get(), nullptr);
  };
  const dds_entity_t image_writer = endpoints(image_type, "rt/measure/image");
  const dds_entity_t frame_writer = endpoints(frame_type, "rt/measure/frame");
  auto image = std::make_unique<sensor_msgs::msg::Image>();
  image->width = 1920;
  image->height = 1080;
  image->step = 1920;
  REQUIRE(image->encoding.assign("nv12"));
  REQUIRE(image->data.resize(ferry::test::kFrameBytes));
  std::memset(image->data.data(), 7, image->data.size());
  auto frame = std::make_unique<Frame>();
  std::memset(frame.get(), 7, sizeof *frame);
  ferry::bridge::CdrWriter writer(config.schema, image_index, image_type.name().c_str());
  const std::span<const std::byte> sample(reinterpret_cast<const std::byte*>(image.get()),
                                          sizeof *image);
  const auto median_us = [](const auto& write) {
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      REQUIRE(write() == DDS_RETCODE_OK);
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  };
  std::printf("load average at start: %.2f\n", load_average());
  for (int run = 0; run < 3; ++run) {
    const double image_us = median_us([&] { return writer.write(image_writer, sample); });
    const double frame_us = median_us([&] { return dds_write(frame_writer, frame.get()); });
    std::printf(
        "export of 3110400 B, p50 of 200: Image %.0f us, fixed-size frame %.0f us (%.2fx)\n",
        image_us, frame_us, image_us / frame_us);
  }
}
