// sensor_msgs/msg/Image between processes (docs/messages.md): C++ through
// the `ferry gen cpp` header, by loan, images of two sizes, against a real
// ferryd that includes the shipped definitions; `ferry topic echo` prints
// strings as strings and sequences as lists (elided unless --full), `ferry
// topic pub` takes both, and a value past a bound is refused naming the
// field. The Python side is tests/python/test_images.py.

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <ferry/ferry.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "daemon_fixture.hpp"
#include "image_pattern.hpp"
#include "json_text.hpp"
#include "test_domain.hpp"

using namespace ferry::test;

namespace {

constexpr std::uint32_t kImages = 6;

}  // namespace

TEST_CASE("C++ to C++: images of two sizes by loan through the generated header") {
  ferry::test::TestDomain domain;
  ferry::test::Daemon daemon(domain, read_file(support_path("images.yaml")));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"image-sub"};
  auto sub = node.subscriber<sensor_msgs::msg::Image>("camera/image");
  ferry::test::Child publisher([] {
    ferry::Node pub_node{"image-pub"};
    auto pub = pub_node.publisher<sensor_msgs::msg::Image>("camera/image");
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (pub.subscriber_count() == 0 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (std::uint32_t i = 0; i < kImages; ++i) {
      auto loan = pub.loan();
      if (!loan || !image_test::fill(**loan, i)) return 2;
      if (pub.publish(std::move(*loan)).delivered != 1) return 1;
    }
    return 0;
  });
  for (std::uint32_t i = 0; i < kImages; ++i) {
    auto sample = sub.take(std::chrono::seconds(10));
    REQUIRE(sample);
    CAPTURE(i);
    CHECK(image_test::check(**sample, i) == "");
  }
  CHECK(publisher.wait() == 0);
}

TEST_CASE("echo and pub: strings as strings, sequences as lists, bounds refused by name") {
  ferry::test::TestDomain domain;
  ferry::test::Daemon daemon(domain, read_file(support_path("images.yaml")));
  ferry::test::use_domain_env(domain);
  const std::string ferry = bin_path("ferry");
  // Past a bound: refused before anything is sent, naming the field.
  auto r = run_program(domain, {ferry, "topic", "pub", "camera/info",
                                "{distortion_model: " + std::string(33, 'x') + "}"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("field 'distortion_model': \"" + std::string(33, 'x') +
                   "\" is 33 bytes; a string<=32 holds at most 32") != std::string::npos);
  r = run_program(domain, {ferry, "topic", "pub", "camera/info",
                           "{d: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]}"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("field 'd': 17 elements given; a f64[<=16] holds at most 16") !=
        std::string::npos);

  // pub takes a string and a sequence; echo prints them back.
  ferry::test::Child publisher([&] {
    const auto p =
        run_program(domain,
                    {ferry, "topic", "pub", "camera/info",
                     "{header: {frame_id: cam0}, distortion_model: plumb_bob, d: [0.5, -1.25], "
                     "width: 640}",
                     "--rate", "40", "--count", "40"},
                    std::chrono::seconds(20));
    return p.exit_code;
  });
  r = run_program(domain, {ferry, "topic", "echo", "camera/info", "--count", "1", "--json"},
                  std::chrono::seconds(10));
  REQUIRE(r.exit_code == 0);
  const auto j = ferry::test::parse_json(r.out);
  CHECK(j["header"]["frame_id"] == "cam0");
  CHECK(j["distortion_model"] == "plumb_bob");
  CHECK(j["d"] == nlohmann::json::array({0.5, -1.25}));
  CHECK(j["width"] == 640);
  CHECK(publisher.wait() == 0);

  // A long sequence is elided (its size and a hex prefix), unless --full.
  // Published every 20 ms until the test is done with it (echo is an
  // observer: it is not waited for as a subscriber).
  ferry::test::Child images([] {
    ferry::Node pub_node{"image-pub"};
    auto pub = pub_node.publisher<sensor_msgs::msg::Image>("camera/image");
    for (int round = 0; round < 1000; ++round) {
      auto loan = pub.loan();
      if (!loan) return 2;
      sensor_msgs::msg::Image& img = **loan;
      // Field by field: a whole Image is 24 MB, no temporary of it on the stack.
      img.header.stamp = {};
      img.header.frame_id.clear();
      img.width = img.height = img.step = 0;
      img.is_bigendian = 0;
      img.data.clear();
      if (!img.encoding.assign("mono8") || !img.data.resize(300)) return 3;
      img.data[299] = 7;
      (void)pub.publish(std::move(*loan));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  });
  r = run_program(domain, {ferry, "topic", "echo", "camera/image", "--count", "1", "--json"},
                  std::chrono::seconds(10));
  REQUIRE(r.exit_code == 0);
  auto image = ferry::test::parse_json(r.out);
  CHECK(image["encoding"] == "mono8");
  CHECK(image["data"]["size"] == 300);
  r = run_program(domain,
                  {ferry, "topic", "echo", "camera/image", "--count", "1", "--json", "--full"},
                  std::chrono::seconds(10));
  REQUIRE(r.exit_code == 0);
  image = ferry::test::parse_json(r.out);
  REQUIRE(image["data"].size() == 300);
  CHECK(image["data"][299] == 7);
  images.kill(SIGKILL);
  (void)images.wait();
}

TEST_CASE("the C++ types refuse past their bounds and never truncate") {
  static sensor_msgs::msg::Image img;  // 24 MB: not on the stack
  CHECK_FALSE(img.encoding.assign(std::string(33, 'x')));
  CHECK(img.encoding.assign(std::string(32, 'x')));
  CHECK_FALSE(img.data.resize(3840u * 2160u * 3u + 1));
  CHECK(img.data.resize_for_overwrite(3840u * 2160u * 3u));
  CHECK(img.data.size() == 3840u * 2160u * 3u);
}
