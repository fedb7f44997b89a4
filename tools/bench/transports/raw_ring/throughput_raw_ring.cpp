// The floor: the transport ring alone, one ring per receiver, the sender
// pushing every message into each. Up to 4 KiB the message is copied into
// the slot (and out by the receiver); larger messages are written once into
// one of 2 x capacity shared buffers and travel as a RawRef, which the
// receiver reads in place (consume_many of one) before freeing the slot.
//
// Why 2 x capacity buffers suffice: message m's buffer is next written for
// m + 2C, after m + C was pushed into every ring, which needed m's slot
// freed in every ring, which each receiver does only after reading m.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "ferry/transport/doorbell.hpp"
#include "harness/bench_config.hpp"
#include "harness/seq.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/raw_ring/raw_ring_area.hpp"
#include "transports/raw_ring/raw_ring_io.hpp"

namespace ferry::bench {

namespace {

using transport::RingConsumer;
using transport::RingError;
using transport::RingProducer;

// Reads the oldest message in place: visit(payload) runs before its slot is
// freed. Polling (spin) or on the doorbell (sleep); false when none came
// within the peer timeout or the ring is corrupt.
template <class Visit>
bool take_in_place(RingConsumer& ring, Wait wait, RunControl& control, Visit&& visit) {
  std::expected<std::uint32_t, RingError> r = 0;
  auto take = [&] {
    r = ring.consume_many(
        1, [&](std::span<const std::byte> payload, std::uint32_t) { visit(payload); });
    return !r || *r != 0;
  };
  if (wait == Wait::Spin) {
    (void)spin_until(take, kPeerTimeoutNs);
  } else {
    const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
    while (!take()) {
      const std::int64_t left = deadline - now_ns();
      if (left <= 0) break;
      (void)transport::doorbell_wait(
          ring.data_doorbell(), [&] { return ring.has_data(); }, std::chrono::nanoseconds(left));
    }
  }
  if (!r) {
    report_error(control, fmt::format("raw-ring receiver: {}", transport::to_string(r.error())));
    return false;
  }
  if (*r == 0) {
    report_error(control, "raw-ring receiver: no message within the peer timeout");
    return false;
  }
  return true;
}

class RawRingThroughput final : public ThroughputTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kRawRing; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "the transport ring alone, one per receiver, {}: up to {} B copied into the slot, larger "
        "as a reference "
        "to a shared buffer; with --batch N (inline), stage_many + one publish / consume_many of N",
        wait == Wait::Spin ? "polled" : "futex waits", kRawInlineMax);
  }

  void prepare(const ThroughputPlan& plan) override {
    const std::uint32_t capacity = throughput_capacity(plan.size);
    const std::uint32_t buffers = raw_inline(plan.size) ? 0 : 2 * capacity;
    area_.emplace(*plan.domain, raw_geometry(plan.size, capacity), plan.receivers, buffers,
                  plan.size);
    buffers_ = buffers;
  }
  void finish() override { area_.reset(); }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    std::vector<RingProducer> rings;
    for (std::uint32_t k = 0; k < plan.receivers; ++k) {
      auto p = RingProducer::attach(area_->ring(k), area_->ring_bytes());
      if (!p) {
        report_error(control, "raw-ring sender: cannot attach a ring");
        return 2;
      }
      rings.push_back(std::move(*p));
    }
    const bool inline_msg = raw_inline(plan.size);
    if (inline_msg && plan.batch > 1) return send_batches(plan, control, rings);
    std::vector<std::byte> msg(inline_msg ? plan.size : sizeof(RawRef), std::byte{0x5a});
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      if (inline_msg) {
        write_seq(msg.data(), seq);
      } else {
        RawRef ref{seq, 0, plan.size};
        if (seq != kStopSeq) {
          ref.offset = area_->buffer_offset(static_cast<std::uint32_t>(seq % buffers_));
          write_seq(area_->at(ref.offset), seq);
        }
        std::memcpy(msg.data(), &ref, sizeof ref);
      }
      for (auto& ring : rings) {
        if (!raw_give(ring, msg, plan.wait, control, "raw-ring sender")) return false;
      }
      return true;
    });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    auto ring = RingConsumer::attach(area_->ring(index), area_->ring_bytes());
    if (!ring) {
      report_error(control, "raw-ring receiver: cannot attach its ring");
      return 2;
    }
    if (plan.wait == Wait::Sleep) ring->set_spin_limit(0);
    if (raw_inline(plan.size) && plan.batch > 1)
      return receive_batches(plan, control, index, *ring);
    std::vector<std::byte> buf(ring->max_message_size());
    const bool ok =
        raw_inline(plan.size)
            ? receive_loop(
                  plan, control, index,
                  [&](std::uint64_t& seq) {
                    const long n = raw_take(*ring, buf, plan.wait, control, "raw-ring receiver");
                    if (n < 0) return false;
                    seq = static_cast<std::uint64_t>(n) == plan.size ? read_seq(buf.data()) : 0;
                    return true;
                  })
            : receive_loop(plan, control, index, [&](std::uint64_t& seq) {
                seq = 0;
                return take_in_place(*ring, plan.wait, control, [&](std::span<const std::byte> m) {
                  RawRef ref;
                  if (m.size() != sizeof ref) return;
                  std::memcpy(&ref, m.data(), sizeof ref);
                  if (ref.seq == kStopSeq) {
                    seq = kStopSeq;
                  } else if (area_->valid(ref)) {
                    seq = read_seq(area_->at(ref.offset));  // in place, before the slot is freed
                  }
                });
              });
    return ok ? 0 : 3;
  }

 private:
  // --batch N (inline sizes): stage_many + one publish() per ring and batch,
  // then waiting for room for what did not fit, as ferry's block policy.
  static int send_batches(const ThroughputPlan& plan, RunControl& control,
                          std::vector<RingProducer>& rings) {
    BatchWriter batch(plan.size, plan.batch);
    const auto size = static_cast<std::uint32_t>(plan.size);
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      return batch.add(
          seq, [](std::byte* slot, std::uint64_t s) { write_seq(slot, s); },
          [&](std::span<const std::byte> bytes, std::uint32_t n) {
            for (auto& ring : rings) {
              std::size_t done = 0;
              while (done < n) {
                const std::size_t k =
                    ring.stage_many(bytes.data() + done * size, n - done, size, 0, {});
                if (k > 0) {
                  ring.publish();
                  done += k;
                  continue;
                }
                std::expected<void, RingError> room;
                if (plan.wait == Wait::Sleep) {
                  room = ring.wait_room(std::chrono::nanoseconds(kPeerTimeoutNs));
                } else {
                  (void)spin_until([&] { return ring.has_room(); }, kPeerTimeoutNs);
                  room = ring.has_room() ? std::expected<void, RingError>()
                                         : std::unexpected(RingError::Timeout);
                }
                if (!room) {
                  report_error(control, fmt::format("raw-ring sender: {}",
                                                    transport::to_string(room.error())));
                  return false;
                }
              }
            }
            return true;
          });
    });
    return ok ? 0 : 3;
  }
  // consume_many of up to N (one head store), polled or after a doorbell wait.
  static int receive_batches(const ThroughputPlan& plan, RunControl& control, std::uint32_t index,
                             RingConsumer& ring) {
    BatchReader reader(plan.size, plan.batch);
    auto refill = [&](std::span<std::byte> out, std::size_t max) -> std::size_t {
      std::size_t got = 0;
      auto take = [&] {
        auto n = ring.consume_many(
            static_cast<std::uint32_t>(max), [&](std::span<const std::byte> m, std::uint32_t) {
              if (m.size() == plan.size)
                std::memcpy(out.data() + got++ * plan.size, m.data(), m.size());
            });
        return n && *n != 0;
      };
      if (plan.wait == Wait::Sleep) {
        const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
        while (!take()) {
          const std::int64_t left = deadline - now_ns();
          if (left <= 0) break;
          (void)transport::doorbell_wait(
              ring.data_doorbell(), [&] { return ring.has_data(); },
              std::chrono::nanoseconds(left));
        }
      } else {
        (void)spin_until(take, kPeerTimeoutNs);
      }
      if (got == 0) report_error(control, "raw-ring receiver: no message within the peer timeout");
      return got;
    };
    const bool ok = receive_loop(plan, control, index,
                                 [&](std::uint64_t& seq) { return reader.next(seq, refill); });
    return ok ? 0 : 3;
  }

  std::optional<RawRingArea> area_;
  std::uint32_t buffers_ = 0;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_raw_ring_throughput() {
  return std::make_unique<RawRingThroughput>();
}

}  // namespace ferry::bench
