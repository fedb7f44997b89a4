// The C++ side of the Python tests: typed ports with plain structs, talking
// to Python ports over a real ferryd. Usage:
//   interop_peer yaml                  the YAML of Inner and All (all_types_yaml.hpp)
//   interop_peer pub-all TOPIC         publishes kAll once a subscriber matched
//   interop_peer sub-all TOPIC         prints "ready", takes one All, prints it as JSON
//   interop_peer pub-frames TOPIC N    loans and publishes N frames (pixel i of frame s: s + i)
// The publishers print "published" and then wait for a line on stdin (or
// 10 s) before they leave, so that their samples stay in the queues while
// the test reads them. Exit 0 on success, 1 on a failure (said on stderr).
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ferry/ferry.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "all_types.hpp"

using namespace ferry::test;

struct Frame {
  std::uint64_t stamp_ns;
  std::uint64_t seq;
  std::uint32_t width;
  std::uint32_t height;
  std::uint8_t pixels[1920 * 1080 * 3 / 2];
};
FERRY_TYPE(Frame);

namespace {

// Every range edge the Python side must read back exactly.
constexpr All kAll{true,
                   -128,
                   -32768,
                   2147483647,
                   INT64_MIN,
                   255,
                   65535,
                   4294967295U,
                   UINT64_MAX,
                   0.1F,
                   -2.25,
                   "hello ferry",
                   {1, -2, 3},
                   {true, "in", 1.5},
                   {{false, "a", 2.5}, {true, "bcdefgh", -3.5}}};

using namespace std::chrono_literals;

bool wait_subscriber(const auto& pub) {
  if (pub.wait_for_subscribers(1, 5s)) return true;
  std::fprintf(stderr, "interop_peer: no subscriber within 5 s\n");
  return false;
}

void linger() {
  std::printf("published\n");
  std::fflush(stdout);
  pollfd in{STDIN_FILENO, POLLIN, 0};
  (void)::poll(&in, 1, 10'000);
}

nlohmann::json inner_json(const Inner& in) {
  return {{"flag", in.flag},
          {"label", std::string(in.label, strnlen(in.label, sizeof in.label))},
          {"value", in.value}};
}

int sub_all(ferry::Node& node, const std::string& topic) {
  auto sub = node.subscriber<All>(topic);
  std::printf("ready\n");
  std::fflush(stdout);
  auto s = sub.take(5s);
  if (!s) {
    std::fprintf(stderr, "interop_peer: no sample within 5 s\n");
    return 1;
  }
  const All& a = **s;
  nlohmann::json out = {{"b", a.b},
                        {"i8", a.i8},
                        {"i16", a.i16},
                        {"i32", a.i32},
                        {"i64", a.i64},
                        {"u8", a.u8},
                        {"u16", a.u16},
                        {"u32", a.u32},
                        {"u64", a.u64},
                        {"f32", a.f32},
                        {"f64", a.f64},
                        {"name", std::string(a.name, strnlen(a.name, sizeof a.name))},
                        {"arr", a.arr},
                        {"inner", inner_json(a.inner)},
                        {"inners", {inner_json(a.inners[0]), inner_json(a.inners[1])}}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

int pub_frames(ferry::Node& node, const std::string& topic, int count) {
  auto pub = node.publisher<Frame>(topic);
  if (!wait_subscriber(pub)) return 1;
  for (int s = 0; s < count; ++s) {
    auto loan = pub.loan();
    if (!loan) {
      std::fprintf(stderr, "interop_peer: loan failed: %s\n", ferry::to_string(loan.error()));
      return 1;
    }
    (*loan)->seq = static_cast<std::uint64_t>(s);
    (*loan)->width = 1920;
    (*loan)->height = 1080;
    for (std::size_t i = 0; i < sizeof(Frame::pixels); ++i) {
      (*loan)->pixels[i] = static_cast<std::uint8_t>(s + i);
    }
    pub.publish(std::move(*loan));
  }
  linger();
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "yaml") {
    std::printf("%s", ferry::test::kInnerAndAllTypes);
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: interop_peer yaml | pub-all|sub-all TOPIC | pub-frames TOPIC N\n");
    return 2;
  }
  ferry::Node node{"interop_peer"};
  const std::string topic = argv[2];
  if (mode == "pub-all") {
    auto pub = node.publisher<All>(topic);
    if (!wait_subscriber(pub)) return 1;
    pub.publish(kAll);
    linger();
    return 0;
  }
  if (mode == "sub-all") return sub_all(node, topic);
  if (mode == "pub-frames" && argc > 3) return pub_frames(node, topic, std::atoi(argv[3]));
  std::fprintf(stderr, "interop_peer: unknown mode '%s'\n", argv[1]);
  return 2;
} catch (const ferry::Error& e) {
  std::fprintf(stderr, "interop_peer: %s\n", e.what());
  return 1;
}
