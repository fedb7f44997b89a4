// Takes frames from camera/frames and reports the delivery latency (publish
// to take, same clock) of each second's frames. Frames are read in place in
// the shared pool. Usage: camera_viewer [frames]
#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli.hpp"
#include "frame.hpp"

int main(int argc, char** argv) try {
  int wanted = 90;
  example::App app{"Takes frames from camera/frames and reports their latency", "camera_viewer"};
  app.add_option("frames", wanted, "Frames to wait for (default 90)")->check(example::at_least(0));
  example::parse(app, argc, argv, "camera_viewer [frames]");
  ferry::Node node{"viewer"};
  auto sub = node.subscriber<Frame>("camera/frames");
  std::vector<std::uint64_t> latencies;
  latencies.reserve(64);
  int received = 0;
  while (received < wanted) {
    auto frame = sub.take(std::chrono::seconds(2));
    if (!frame) break;
    latencies.push_back(now_ns() - (*frame)->stamp_ns);
    ++received;
    if (latencies.size() == 30) {
      std::sort(latencies.begin(), latencies.end());
      std::printf("viewer: frame %llu (%ux%u), latency p50 %.1f us, max %.1f us\n",
                  static_cast<unsigned long long>((*frame)->seq), (*frame)->width, (*frame)->height,
                  static_cast<double>(latencies[latencies.size() / 2]) / 1e3,
                  static_cast<double>(latencies.back()) / 1e3);
      latencies.clear();
    }
  }
  std::printf("viewer: received %d frame(s)\n", received);
  return received > 0 ? 0 : 1;
} catch (const ferry::Error& e) {
  std::fprintf(stderr, "camera_viewer: %s\n", e.what());
  return 1;
}
