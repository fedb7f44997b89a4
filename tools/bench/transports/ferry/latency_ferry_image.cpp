// ferry-image: ferry-loan's ping-pong with a sensor_msgs/msg/Image instead
// of a bytes sample. Each side loans an Image, writes its header (stamp,
// frame id), size, encoding and step, sets its data sequence's length to
// the message size without clearing it, and writes the sequence number in
// the first 8 bytes of the data: what a camera driver does before it fills
// the pixels (the pixels stay in the pool, as ferry-loan's payload does).
#include <fmt/format.h>

#include "harness/bench_config.hpp"
#include "harness/private_domain.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/ferry/bench_image.hpp"
#include "transports/ferry/ferry_side.hpp"

namespace ferry::bench {

namespace {

using msgs::Image;

std::byte* bytes_of(Image& img) noexcept { return reinterpret_cast<std::byte*>(img.data.data()); }
const std::byte* bytes_of(const Image& img) noexcept {
  return reinterpret_cast<const std::byte*>(img.data.data());
}
using ImagePublisher = ferry::Publisher<Image>;
using ImageSubscriber = ferry::Subscriber<Image>;

// 1920 x 1080 NV12 (the default frame size) reads as such; any other size
// as one row of bytes.
void write_image(Image& img, std::uint64_t size, std::uint64_t seq) {
  img.header.stamp.sec = static_cast<std::int32_t>(seq / 1'000'000'000);
  img.header.stamp.nanosec = static_cast<std::uint32_t>(seq % 1'000'000'000);
  (void)img.header.frame_id.assign("camera");
  const bool nv12 = size == std::uint64_t{1920} * 1080 * 3 / 2;
  img.width = nv12 ? 1920 : static_cast<std::uint32_t>(size);
  img.height = nv12 ? 1080 : 1;
  (void)img.encoding.assign(nv12 ? "nv12" : "mono8");
  img.is_bigendian = 0;
  img.step = img.width;
  (void)img.data.resize_for_overwrite(size);  // size <= the bound: checked in prepare()
  write_seq(bytes_of(img), seq);
}

bool publish_image(ImagePublisher& pub, std::uint64_t size, std::uint64_t seq, RunControl& control,
                   const char* who) {
  auto loan = pub.loan();
  if (!loan) {
    report_error(control, fmt::format("{}: loan of an Image failed: {}", who,
                                      ferry::to_string(loan.error())));
    return false;
  }
  write_image(**loan, size, seq);
  if (pub.publish(std::move(*loan)).delivered == 0) {
    report_error(control, fmt::format("{}: publish reached no subscriber", who));
    return false;
  }
  return true;
}

class FerryImageLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kFerryImage; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "loan / publish / {} of a sensor_msgs/msg/Image (header, encoding, the message in its "
        "data sequence; policy block): zero copy",
        wait == Wait::Spin ? "take() polled"
                           : "take(timeout) with take_spin 0 (a futex sleep at once)");
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    const std::string who = fmt::format("{} ping", kFerryImage);
    if (plan.size > decltype(Image::data)::capacity()) {
      report_error(control, fmt::format("{}: {} bytes do not fit an Image's data (at most {})", who,
                                        plan.size, decltype(Image::data)::capacity()));
      return 2;
    }
    ferry::Node node = join_domain(*plan.domain, "ping", plan.wait);
    const SideTopics topics = ping_side_topics(plan, kPath);
    ImagePublisher pub = node.publisher<Image>(topics.out);
    ImageSubscriber sub = node.subscriber<Image>(topics.in);
    if (!latency_side_ready(pub, sub, control, who, "echo")) return 2;
    const std::uint64_t size = plan.size;
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!publish_image(pub, size, seq, control, who.c_str())) return false;
      auto s = next_sample(sub, plan.wait, control, who.c_str());
      if (!s) return false;
      const Image& img = **s;
      if (img.data.size() != size || read_seq(bytes_of(img)) != seq) {
        report_error(control, fmt::format("{}: expected pong {} of {} bytes, got {} of {}", who,
                                          seq, size, read_seq(bytes_of(img)), img.data.size()));
        return false;
      }
      return true;
    });
    (void)publish_image(pub, size, kStopSeq, control, who.c_str());
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    const std::string who = fmt::format("{} echo", kFerryImage);
    if (plan.size > decltype(Image::data)::capacity()) return 2;
    ferry::Node node = join_domain(*plan.domain, "echo", plan.wait);
    const SideTopics topics = echo_side_topics(plan, kPath);
    ImageSubscriber sub = node.subscriber<Image>(topics.in);
    ImagePublisher pub = node.publisher<Image>(topics.out);
    if (!latency_side_ready(pub, sub, control, who, "ping")) return 2;
    for (;;) {
      auto s = next_sample(sub, plan.wait, control, who.c_str());
      if (!s) return 3;
      const std::uint64_t seq = read_seq(bytes_of(**s));
      if (seq == kStopSeq) break;
      auto loan = pub.loan();
      if (!loan) {
        report_error(control,
                     fmt::format("{}: loan failed: {}", who, ferry::to_string(loan.error())));
        return 3;
      }
      write_image(**loan, plan.size, seq);
      s.reset();  // the ping goes back to the pool before we answer
      if (!pong_delivered(pub.publish(std::move(*loan)), control, who)) return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  static constexpr FerryPath kPath = FerryPath::Image;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_ferry_image_latency() {
  return std::make_unique<FerryImageLatency>();
}

}  // namespace ferry::bench
