// ferry foxglove with a client that stops reading for 6 s while 1080p
// frames flow at 30 Hz: it loses its oldest frames (never a pose) and is
// told, the server's memory stays within --send-buffer plus a constant, the
// block publisher never waits, and the other client misses nothing.
// A test of its own (about 10 s), run beside test_foxglove.
#include "foxglove_test_util.hpp"

using namespace std::chrono_literals;
using namespace fox_test;

TEST_CASE_FIXTURE(Served, "a stalled client loses its oldest frames, is told, and slows nobody") {
  // 20 frames: far below the 560 MB that 6 s of frames would take, and
  // room for the client that reads to be descheduled for a while.
  constexpr std::size_t kSendBufferMiB = 64;
  Foxglove fox(domain, {"--send-buffer", std::to_string(kSendBufferMiB)});
  // A real subscriber on the block topic: the camera waits for it, never
  // for the server.
  Child real([] {
    ferry::Node node{"viewer"};
    auto sub = node.subscriber<Frame>("camera/frames");
    for (std::uint32_t i = 0; i < 240; ++i) {
      auto s = sub.take(10s);
      if (!s || (*s)->seq != i) return 3;
    }
    return 0;
  });
  const json done = {{"robot/pose", 799}, {"camera/frames", 239}};
  Client fast(domain, "watch",
              {{"url", fox.url},
               {"subscribe", {"robot/pose", "camera/frames"}},
               {"done", done},
               {"timeout_ms", 30000}});
  Client stalled(domain, "watch",
                 {{"url", fox.url},
                  {"subscribe", {"robot/pose", "camera/frames"}},
                  {"done", done},
                  {"pause", {{"after_ms", 300}, {"for_ms", 6000}}},
                  {"timeout_ms", 30000}});
  REQUIRE(fast.subscribed());
  REQUIRE(stalled.subscribed());
  const std::size_t baseline = rss_bytes(fox.program.pid());
  Child poses([] { return publish_poses(800, 10ms); });  // 100 Hz, 8 s
  // The camera waits only for its real subscriber (here and there descheduled
  // by a loaded machine), never for the stalled client: that would be seconds.
  constexpr auto kMaxPublish = kSanitized ? 1500ms : 500ms;
  Child frames([] { return publish_frames(240, 33333us, kMaxPublish); });  // 30 Hz, 8 s
  // The sampler thread starts only after the children are forked: a child
  // forked while it held a lock (the allocator's, a stream's) would inherit
  // that lock held forever, and its node would stop beating (seen under ASan).
  std::atomic<bool> sampling{true};
  std::atomic<std::size_t> peak{baseline};
  std::thread sampler([&] {
    while (sampling.load()) {
      peak.store(std::max(peak.load(), rss_bytes(fox.program.pid())));
      std::this_thread::sleep_for(20ms);
    }
  });
  CHECK(frames.wait() == 0);  // no publish waited for the stalled client
  CHECK(poses.wait() == 0);
  CHECK(real.wait() == 0);
  const json f = fast.result();
  const json s = stalled.result();
  sampling.store(false);
  sampler.join();

  // The other client's stream is complete (in a sanitizer build, at least
  // in order).
  CHECK(f["topics"]["camera/frames"]["out_of_order"] == 0);
  if (!kSanitized) {
    CHECK(f["why"] == "done");
    CHECK(f["topics"]["camera/frames"]["gaps"] == 0);
    CHECK(f["topics"]["robot/pose"]["gaps"] == 0);
    CHECK(f["statuses"].empty());
  }
  // The stalled one lost frames, the oldest (it got the newest), no pose
  // (the busy channel could not starve it), and was told.
  CHECK(s["why"] == "done");
  CHECK(s["paused"]["ended_ms"].get<int>() - s["paused"]["started_ms"].get<int>() >= 6000);
  CHECK(s["topics"]["camera/frames"]["gaps"] > 0);
  CHECK(s["topics"]["camera/frames"]["last_seq"] == 239);
  CHECK(s["topics"]["camera/frames"]["out_of_order"] == 0);
  CHECK(s["topics"]["robot/pose"]["gaps"] == 0);
  CHECK(s["topics"]["robot/pose"]["count"] == 800);
  CHECK(has_status(s, 1, "'camera/frames'"));
  CHECK(has_status(s, 1, "too slowly"));
  // Memory stayed within the send buffer plus a constant (the hand-off
  // between the server's threads, frames being written, the allocator).
  constexpr std::size_t kConstant = std::size_t{48} << 20;
  MESSAGE("server RSS: " << baseline / 1024 << " KiB before, " << peak.load() / 1024
                         << " KiB at most while a client stalled");
  if (!kSanitized) CHECK(peak.load() <= baseline + (kSendBufferMiB << 20) + kConstant);
  CHECK(fox.stop() == 0);
  CHECK(fox.program.err().find("dropped") != std::string::npos);  // logged too
}
