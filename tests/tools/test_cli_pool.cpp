// `ferry pool` against a real ferryd: per size class loaned and in-flight
// chunks, and the topics holding the most chunks (queued in their rings, or
// held by a node), with the one held loan the data cannot attribute named
// as such.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "frame.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using nlohmann::json;

namespace {

constexpr std::uint64_t kBig = 4 * 1024 * 1024;
constexpr std::uint64_t kSmall = 1024;

// camera/status is inline (64 B): its queued sample holds no chunk. mux/a
// and mux/b are two bytes topics of one node, so its loan cannot be split.
const std::string kConfig = seq_config(
    "  - { name: camera/frames, type: Frame, capacity: 4, policy: drop_new, max_loans: 2 }\n"
    "  - { name: camera/status, type: Seq, capacity: 4, policy: drop_new }\n"
    "  - { name: logs/text, type: bytes, max_size: 1KiB, capacity: 8, policy: drop_new, max_held: "
    "2 }\n"
    "  - { name: mux/a, type: bytes, max_size: 1KiB }\n"
    "  - { name: mux/b, type: bytes, max_size: 1KiB }\n",
    kFrameType +
        "pool:\n"
        "  - { chunk_size: 4MiB, count: 8 }\n"
        "  - { chunk_size: 1KiB, count: 16 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

const json& class_of(const json& pool, std::uint64_t chunk_size) {
  for (const auto& c : pool["classes"]) {
    if (c["chunk_size"] == chunk_size) return c;
  }
  FAIL("no size class of ", chunk_size, " bytes");
  static const json none;
  return none;
}

std::optional<json> holder(const json& pool, const std::string& node) {
  for (const auto& h : pool["holders"]) {
    if (h["node"] == node) return h;
  }
  return std::nullopt;
}

void loan_and_publish(ferry::Publisher<ferry::Bytes>& pub, const std::string& text) {
  auto loan = pub.loan(text.size());
  REQUIRE(loan);
  std::memcpy((*loan)->data(), text.data(), text.size());
  REQUIRE(pub.publish(std::move(*loan)).delivered == 1);
}

}  // namespace

TEST_CASE_FIXTURE(
    Served,
    "pool names the topics holding the most chunks: queued, held, and a loan it cannot split") {
  ferry::Node camera{"camera"};
  ferry::Node viewer{"viewer"};
  ferry::Node logger{"logger"};
  ferry::Node tail{"tail"};
  ferry::Node mux{"mux"};
  auto frames = camera.publisher<Frame>("camera/frames");
  auto status = camera.publisher<Seq>("camera/status");
  auto frames_in = viewer.subscriber<Frame>("camera/frames");  // never takes: frames stay queued
  auto status_in = viewer.subscriber<Seq>("camera/status");
  auto lines = logger.publisher<ferry::Bytes>("logs/text");
  auto lines_in = tail.subscriber<ferry::Bytes>("logs/text");
  auto mux_a = mux.publisher<ferry::Bytes>("mux/a");
  auto mux_b = mux.publisher<ferry::Bytes>("mux/b");
  REQUIRE(eventually([&] {
    return frames.subscriber_count() == 1 && status.subscriber_count() == 1 &&
           lines.subscriber_count() == 1;
  }));

  // camera/frames: 3 frames queued to the viewer, 1 loan the camera keeps.
  for (std::uint32_t i = 0; i < 3; ++i) {
    auto loan = frames.loan();
    REQUIRE(loan);
    (*loan)->width = 1920;
    (*loan)->height = 1080;
    REQUIRE(frames.publish(std::move(*loan)).delivered == 1);
  }
  auto kept_frame = frames.loan();
  REQUIRE(kept_frame);
  REQUIRE(status.publish(make_seq(1, 1)).delivered == 1);
  // logs/text: 3 lines; the tail takes 2 and holds them, 1 stays queued.
  // Longer than a bytes topic's slot holds inline, so each takes a chunk.
  for (int i = 0; i < 3; ++i)
    loan_and_publish(lines, "line " + std::to_string(i) + std::string(300, '.'));
  auto first = lines_in.take(std::chrono::seconds(5));
  auto second = lines_in.take(std::chrono::seconds(5));
  REQUIRE((first && second));
  // mux: one loan on a node with two pooled topics.
  auto mux_loan = mux_a.loan(300);  // more than a slot holds: a chunk
  REQUIRE(mux_loan);

  const json pool = ferry_json(domain, {"pool"});
  const json& big = class_of(pool, kBig);
  CHECK(big["total"] == 8);
  CHECK(big["loaned"] == 1);
  CHECK(big["in_flight"] == 3);
  CHECK(big["free"] == 4);
  CHECK(big["low_water"] == 4);
  const json& small = class_of(pool, kSmall);
  CHECK(small["loaned"] == 1);     // mux's loan
  CHECK(small["in_flight"] == 3);  // 2 held by the tail, 1 queued to it
  CHECK(small["free"] == 12);

  const json& topics = pool["topics"];
  REQUIRE(topics.is_array());
  REQUIRE(topics.size() == 3);
  CHECK(topics[0] == json{{"topic", "camera/frames"},
                          {"chunks", 4},
                          {"bytes", 4 * kBig},
                          {"queued", 3},
                          {"held", 1},
                          {"nodes", {"camera", "viewer"}}});
  CHECK(topics[1] == json{{"topic", "logs/text"},
                          {"chunks", 3},
                          {"bytes", 3 * kSmall},
                          {"queued", 1},
                          {"held", 2},
                          {"nodes", {"tail"}}});
  CHECK(topics[2] == json{{"topic", nullptr},
                          {"candidates", {"mux/a", "mux/b"}},
                          {"chunks", 1},
                          {"bytes", kSmall},
                          {"queued", 0},
                          {"held", 1},
                          {"nodes", {"mux"}}});

  // Per node too, its topics as an array.
  const auto cam = holder(pool, "camera");
  REQUIRE(cam);
  CHECK((*cam)["chunks"] == 1);
  CHECK((*cam)["topics"] == json{"camera/frames", "camera/status"});
  const auto view = holder(pool, "viewer");
  REQUIRE(view);
  CHECK((*view)["chunks"] == 3);
  CHECK((*view)["pending"] == 3);

  const auto text = run_program(domain, {bin_path("ferry"), "pool"});
  REQUIRE(text.exit_code == 0);
  CAPTURE(text.out);
  const auto heading = text.out.find("topics holding the most chunks:\nTOPIC");
  REQUIRE(heading != std::string::npos);
  const auto frames_at = text.out.find("\ncamera/frames ", heading);
  const auto logs_at = text.out.find("\nlogs/text ", heading);
  const auto mux_at = text.out.find("\n(node mux, topics mux/a, mux/b) ", heading);
  REQUIRE(frames_at != std::string::npos);
  REQUIRE(logs_at != std::string::npos);
  REQUIRE(mux_at != std::string::npos);
  CHECK(frames_at < logs_at);
  CHECK(logs_at < mux_at);
  CHECK(text.out.find("16.0 MiB") != std::string::npos);
  CHECK(text.out.find("camera, viewer") != std::string::npos);
  CHECK(text.out.find("camera/status") == std::string::npos);
}

TEST_CASE_FIXTURE(
    Served, "pool says in one line that no topic holds a chunk once every sample is released") {
  ferry::Node camera{"camera"};
  ferry::Node viewer{"viewer"};
  auto frames = camera.publisher<Frame>("camera/frames");
  auto frames_in = viewer.subscriber<Frame>("camera/frames");
  REQUIRE(frames.wait_for_subscribers(1, std::chrono::seconds(10)));
  {
    auto loan = frames.loan();
    REQUIRE(loan);
    REQUIRE(frames.publish(std::move(*loan)).delivered == 1);
    REQUIRE(frames_in.take(std::chrono::seconds(5)));  // taken and released at once
  }

  const json pool = ferry_json(domain, {"pool"});
  for (const auto& c : pool["classes"]) {
    CHECK(c["free"] == c["total"]);
    CHECK(c["loaned"] == 0);
    CHECK(c["in_flight"] == 0);
  }
  CHECK(class_of(pool, kBig)["low_water"] == 7);  // the one frame was out once
  CHECK(pool["topics"] == json::array());
  CHECK(pool["holders"] == json::array());
  // The overflow holder nodes (a chunk held by more than 13 nodes): all free.
  CHECK(pool["holder_nodes"]["total"].get<std::uint64_t>() >= 64);
  CHECK(pool["holder_nodes"]["free"] == pool["holder_nodes"]["total"]);
  CHECK(pool["holder_nodes"]["refused_holders"] == 0);

  const auto text = run_program(domain, {bin_path("ferry"), "pool"});
  CHECK(text.exit_code == 0);
  CAPTURE(text.out);
  CHECK(text.out.find("TOTAL  FREE  LOANED  IN_FLIGHT  LOW_WATER  EXHAUSTED\n") !=
        std::string::npos);
  CHECK(text.out.find("\nholder nodes: ") != std::string::npos);
  CHECK(text.out.find("\nno topic holds a chunk: nothing is queued or held\n") !=
        std::string::npos);
  CHECK(text.out.find("TOPIC") == std::string::npos);
}
