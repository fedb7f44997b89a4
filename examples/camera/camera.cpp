// Publishes 1080p frames at 30 Hz: each frame is written straight into a
// chunk of the shared pool (a loan) and published without a copy.
// Usage: camera_publisher [frames]
#include <cstdio>
#include <cstring>
#include <thread>

#include "cli.hpp"
#include "frame.hpp"

int main(int argc, char** argv) try {
  int frames = 90;
  example::App app{"Publishes 1080p frames on camera/frames at 30 Hz", "camera_publisher"};
  app.add_option("frames", frames, "Frames to publish (default 90)")->check(example::at_least(0));
  example::parse(app, argc, argv, "camera_publisher [frames]");
  ferry::Node node{"camera"};
  auto pub = node.publisher<Frame>("camera/frames");
  (void)pub.wait_for_subscribers(1, std::chrono::seconds(10));

  const auto period = std::chrono::microseconds(33333);
  auto next = std::chrono::steady_clock::now();
  for (int i = 0; i < frames; ++i) {
    auto loan = pub.loan();
    if (!loan) {
      std::fprintf(stderr, "camera: no frame buffer: %s\n", ferry::to_string(loan.error()));
      return 1;
    }
    Frame& f = **loan;
    f.seq = static_cast<std::uint64_t>(i);
    f.width = 1920;
    f.height = 1080;
    // A moving gradient, so a viewer can tell frames apart: one row per frame.
    std::memset(f.pixels + static_cast<std::size_t>(i % 1080) * 1920, i & 0xFF, 1920);
    f.stamp_ns = now_ns();
    const ferry::PublishResult r = pub.publish(std::move(*loan));
    if (i % 30 == 0) {
      std::printf("camera: frame %d to %u viewer(s), %u overwritten\n", i, r.delivered,
                  r.overwritten);
    }
    next += period;
    std::this_thread::sleep_until(next);
  }
  return 0;
} catch (const ferry::Error& e) {
  std::fprintf(stderr, "camera_publisher: %s\n", e.what());
  return 1;
}
