// The figures of docs/bridge.md ("What it costs"): ferry -> bridge -> DDS ->
// bridge -> ferry against a plain Cyclone DDS publisher/subscriber pair
// (dds_peer) with the same types, over the same veth pair. Not a ctest test:
//   build/tests/bridge_measure            (root: namespaces; else loopback)
//   BRIDGE_MEASURE_FRAMES=0 build/tests/bridge_measure    (64 B only)
// 64 B round trips run four ways: the bridges as they start by default and
// with `--export-spin-us 50`, each with the ferry ends' take(timeout)
// spinning first (ferry's default) and asleep at once (take_spin 0, as the
// Cyclone peer waits in a waitset).
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ferry/ferry.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bridge_harness.hpp"
#include "bridge_types.hpp"
#include "daemon_fixture.hpp"

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
