#pragma once
// What test_foxglove and test_foxglove_stall share: the domain, the sample
// types, `ferry foxglove` and the Node.js client (tests/tools/foxglove_client)
// run as programs, and the publishers run in forked children.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ferry/ferry.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "eventually.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/ros2msg.hpp"
#include "json_text.hpp"
#include "pool_probe.hpp"
#include "test_domain.hpp"

using ferry::test::Background;
using ferry::test::bin_path;
using ferry::test::Child;
using ferry::test::eventually;
using ferry::test::TestDomain;
using nlohmann::json;

namespace fox_test {

const std::string kYaml = R"(
liveness: { heartbeat_ms: 100, timeout_ms: 3000 }
pool:
  - { chunk_size: 4KiB, count: 512 }
  - { chunk_size: 4MiB, count: 40 }
types:
  geo/Pose:
    fields:
      - { name: seq, type: u64 }
      - { name: stamp_ns, type: u64 }
      - { name: x, type: f64 }
      - { name: y, type: f64 }
      - { name: z, type: f64 }
      - { name: ok, type: bool }
      - { name: frame, type: "char[23]" }
  cam/Frame:
    fields:
      - { name: seq, type: u32 }
      - { name: width, type: u32 }
      - { name: height, type: u32 }
      - { name: pixels, type: "u8[3110400]" }
# Queues of 2 s of poses and a quarter second of frames: the server's
# observer rides out its taking thread being descheduled for a while (ctest
# runs other tests beside, sanitizer builds are slower).
topics:
  - { name: robot/pose, type: geo/Pose, capacity: 2048, policy: drop_oldest }
  - { name: robot/cmd, type: geo/Pose, capacity: 64, policy: drop_oldest }
  - { name: camera/frames, type: cam/Frame, capacity: 8, policy: block, block_timeout_ms: 2000 }
  - { name: logs/text, type: bytes, max_size: 1KiB, policy: drop_oldest }
)";

// 64 bytes: the pose of the targets. The bool makes its CDR form differ from
// its memory (encoded field by field); the frame is its own CDR form (copied
// as one block from the pool chunk).
struct Pose {
  std::uint64_t seq;
  std::uint64_t stamp_ns;
  double x, y, z;
  bool ok;
  char frame[23];
};
static_assert(sizeof(Pose) == 64);

// A 1080p NV12 frame (1920 x 1080 x 1.5 bytes).
struct Frame {
  std::uint32_t seq;
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[3110400];
};

// An undeclared type: a topic that comes and goes with its program.
struct Blob {
  std::uint8_t bytes[24];
};

}  // namespace fox_test

FERRY_TYPE_NAMED(fox_test::Pose, "geo/Pose");
FERRY_TYPE_NAMED(fox_test::Frame, "cam/Frame");
FERRY_TYPE_NAMED(fox_test::Blob, "ferry_test/Blob");

namespace fox_test {

using namespace std::chrono_literals;

// Under a sanitizer the server runs several times slower and ASan keeps
// freed memory in quarantine: the timing and memory targets are checked in
// the normal build only (what every build checks is said case by case).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
using Served = ferry::test::ServedDomain<kYaml>;

std::uint64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// `ferry foxglove --port 0 ...`, and the URL it serves.
struct Foxglove {
  Background program;
  std::string url;

  Foxglove(const TestDomain& domain, std::vector<std::string> extra = {})
      : program(domain, [&] {
          std::vector<std::string> argv = {bin_path("ferry"), "foxglove", "--port", "0"};
          argv.insert(argv.end(), extra.begin(), extra.end());
          return argv;
        }()) {
    REQUIRE_MESSAGE(program.out_contains("serving domain", 20s), program.err());
    const std::string out = program.out();
    const auto at = out.find("ws://");
    REQUIRE(at != std::string::npos);
    url = out.substr(at, out.find(' ', at) - at);
  }
  // SIGINT, then its exit status (0: it stopped cleanly).
  int stop() {
    program.signal(SIGINT);
    return program.wait(10s);
  }
};

// The Node.js client in one of its modes (client.js).
struct Client {
  Background program;
  Client(const TestDomain& domain, const std::string& mode, const json& options)
      : program(domain, {FERRY_NODE, std::string(FERRY_FOXGLOVE_CLIENT_DIR) + "/client.js", mode,
                         ferry::test::json_text(options)}) {}
  [[nodiscard]] bool subscribed() const { return program.out_contains("subscribed\n", 20s); }
  // Waits for it to exit 0 and returns its result.
  json result(std::chrono::milliseconds timeout = 30s) {
    const int code = program.wait(timeout);
    INFO("client.js stderr: " << program.err());
    REQUIRE(code == 0);
    const std::string out = program.out();
    const auto at = out.find("result ");
    REQUIRE(at != std::string::npos);
    return ferry::test::parse_json(out.substr(at + 7));
  }
};

// Waits until the topic's publisher sees the server's observer, so that
// every sample published afterwards reaches it.
template <class P>
bool wait_for_observer(const P& publisher) {
  return eventually([&] { return publisher.observer_count() >= 1; }, 10s);
}

// In a child: `count` poses every `period`; 0 when all went out.
int publish_poses(std::uint64_t count, std::chrono::microseconds period) {
  ferry::Node node{"pose-pub"};
  auto pub = node.publisher<Pose>("robot/pose");
  if (!wait_for_observer(pub)) return 3;
  auto next = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < count; ++i) {
    Pose p{};
    p.seq = i;
    p.x = static_cast<double>(i) * 0.5;
    p.y = -static_cast<double>(i);
    p.z = 0.25;
    p.ok = i % 2 == 0;
    std::strncpy(p.frame, "map", sizeof p.frame);
    p.stamp_ns = realtime_ns();
    if (pub.publish(p).error) return 4;
    next += period;
    std::this_thread::sleep_until(next);
  }
  return 0;
}

// In a child: `count` frames every `period` on the block topic, each loaned
// and published in place. Exits 0 only when no publish waited: none timed
// out and none took longer than `max_publish`.
int publish_frames(std::uint32_t count, std::chrono::microseconds period,
                   std::chrono::milliseconds max_publish) {
  ferry::Node node{"camera"};
  auto pub = node.publisher<Frame>("camera/frames");
  if (!wait_for_observer(pub)) return 3;
  auto next = std::chrono::steady_clock::now();
  auto longest = std::chrono::steady_clock::duration::zero();
  for (std::uint32_t i = 0; i < count; ++i) {
    auto loan = pub.loan();
    if (!loan) return 4;
    Frame& f = **loan;
    f.seq = i;
    f.width = 1920;
    f.height = 1080;
    f.pixels[0] = static_cast<std::uint8_t>(i & 255);
    f.pixels[sizeof f.pixels - 1] = static_cast<std::uint8_t>((i * 7) & 255);
    const auto before = std::chrono::steady_clock::now();
    const ferry::PublishResult r = pub.publish(std::move(*loan));
    longest = std::max(longest, std::chrono::steady_clock::now() - before);
    if (r.error || r.timed_out != 0) return 5;
    next += period;
    std::this_thread::sleep_until(next);
  }
  if (longest > max_publish) {
    std::fprintf(stderr, "a publish took %lld us\n",
                 static_cast<long long>(longest / std::chrono::microseconds(1)));
    return 6;
  }
  return 0;
}

// The resident memory of `pid`, in bytes (VmRSS of /proc/PID/status).
std::size_t rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("VmRSS:")) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

const json* channel_of(const json& result, const std::string& topic) {
  for (const auto& c : result["channels"])
    if (c["topic"] == topic) return &c;
  return nullptr;
}

bool has_status(const json& result, int level, const std::string& part) {
  return std::any_of(result["statuses"].begin(), result["statuses"].end(), [&](const json& s) {
    return s["level"] == level && s["message"].get<std::string>().find(part) != std::string::npos;
  });
}

}  // namespace fox_test
