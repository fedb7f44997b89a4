// The floor: the transport ring alone, over a Segment, no ferryd, no pool,
// no ports. Messages up to 4 KiB are copied into the slot and out of it;
// larger ones travel as a RawRef to a buffer in the same segment, whose
// first 8 bytes (the sequence number) the receiver reads.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/raw_ring/raw_ring_area.hpp"
#include "transports/raw_ring/raw_ring_io.hpp"

namespace ferry::bench {

namespace {

using transport::RingConsumer;
using transport::RingProducer;

constexpr std::uint32_t kCapacity = 64;  // one message in flight

class RawRingLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kRawRing; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "the transport ring alone (no ferryd, pool or ports), {}: up to {} B copied into the slot, "
        "larger as a "
        "reference to a shared buffer",
        wait == Wait::Spin ? "try_pop polled" : "pop() with no spin (futex at once)",
        kRawInlineMax);
  }

  void prepare(const LatencyPlan& plan) override {
    const std::uint32_t buffers = raw_inline(plan.size) ? 0 : 2;
    area_.emplace(*plan.domain, raw_geometry(plan.size, kCapacity), 2, buffers, plan.size);
  }
  void finish() override { area_.reset(); }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    auto out = RingProducer::attach(area_->ring(0), area_->ring_bytes());
    auto in = RingConsumer::attach(area_->ring(1), area_->ring_bytes());
    if (!out || !in) {
      report_error(control, "raw-ring ping: cannot attach the rings");
      return 2;
    }
    if (plan.wait == Wait::Sleep) in->set_spin_limit(0);
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, "raw-ring ping: the echo side did not start");
      return 2;
    }
    const bool inline_msg = raw_inline(plan.size);
    const std::uint64_t size = plan.size;
    std::vector<std::byte> msg(inline_msg ? size : sizeof(RawRef), std::byte{0x5a});
    std::vector<std::byte> reply(in->max_message_size());
    const std::uint64_t mine = area_->buffer_offset(0);
    const std::uint64_t theirs = area_->buffer_offset(1);
    auto send = [&](std::uint64_t seq) {
      if (inline_msg) {
        write_seq(msg.data(), seq);
      } else {
        write_seq(area_->at(mine), seq);
        const RawRef ref{seq, mine, size};
        std::memcpy(msg.data(), &ref, sizeof ref);
      }
      return raw_give(*out, msg, plan.wait, control, "raw-ring ping", transport::Flush::Now);
    };
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!send(seq)) return false;
      const long n = raw_take(*in, reply, plan.wait, control, "raw-ring ping");
      if (n < 0) return false;
      bool good = false;
      if (inline_msg) {
        good = static_cast<std::uint64_t>(n) == size && read_seq(reply.data()) == seq;
      } else {
        RawRef ref;
        std::memcpy(&ref, reply.data(), sizeof ref);
        good = n == sizeof ref && ref.seq == seq && ref.offset == theirs && area_->valid(ref) &&
               read_seq(area_->at(ref.offset)) == seq;
      }
      if (!good) report_error(control, fmt::format("raw-ring ping: bad answer to {}", seq));
      return good;
    });
    (void)send(kStopSeq);
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    auto in = RingConsumer::attach(area_->ring(0), area_->ring_bytes());
    auto out = RingProducer::attach(area_->ring(1), area_->ring_bytes());
    if (!out || !in) {
      report_error(control, "raw-ring echo: cannot attach the rings");
      return 2;
    }
    if (plan.wait == Wait::Sleep) in->set_spin_limit(0);
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, "raw-ring echo: the ping side did not start");
      return 2;
    }
    const bool inline_msg = raw_inline(plan.size);
    std::vector<std::byte> buf(in->max_message_size());
    const std::uint64_t mine = area_->buffer_offset(1);
    for (;;) {
      const long n = raw_take(*in, buf, plan.wait, control, "raw-ring echo");
      if (n < 0) return 3;
      if (inline_msg) {
        if (read_seq(buf.data()) == kStopSeq) break;
        if (!raw_give(*out, std::span(buf.data(), static_cast<std::size_t>(n)), plan.wait, control,
                      "raw-ring echo", transport::Flush::Now)) {
          return 3;
        }
        continue;
      }
      RawRef ref;
      std::memcpy(&ref, buf.data(), sizeof ref);
      if (ref.seq == kStopSeq) break;
      if (n != sizeof ref || !area_->valid(ref)) {
        report_error(control, "raw-ring echo: a reference outside the buffers");
        return 3;
      }
      const std::uint64_t seq = read_seq(area_->at(ref.offset));
      write_seq(area_->at(mine), seq);
      const RawRef answer{seq, mine, ref.size};
      std::memcpy(buf.data(), &answer, sizeof answer);
      if (!raw_give(*out, std::span(buf.data(), sizeof answer), plan.wait, control, "raw-ring echo",
                    transport::Flush::Now))
        return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  std::optional<RawRingArea> area_;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_raw_ring_latency() {
  return std::make_unique<RawRingLatency>();
}

}  // namespace ferry::bench
