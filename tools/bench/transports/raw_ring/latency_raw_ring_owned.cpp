// The floor of a zero-copy hand-off that records who holds the buffer:
// raw-ring passing a reference, plus the least a pool that survives a
// crash does per sample. One buffer travels back and forth, as ferry's
// pooled chunk does in this ping-pong (each side frees what it took and
// loans it again), and its owner word, on a cache line of its own as a
// pool keeps its metadata apart from the payload, goes through the four
// compare-and-swaps that say at every moment who holds it:
//   claim     Free -> Owned(me)          before writing the payload
//   hand-over Owned(me) -> Pending(peer) before the push
//   accept    Pending(me) -> Owned(me)   after the pop, before reading
//   release   Owned(me) -> Free          once read
// Only the accept finds the owner line on the other core; the hand-over
// demotes it and the payload's first line to the shared cache, as the
// pool's transfer does. Up to 4 KiB the
// messages are copied into the slot, as raw-ring's are (no buffer, no owner).
// docs/benchmarks.md.
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <expected>
#include <memory>
#include <optional>
#include <vector>

#include "ferry/transport/cache_demote.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/raw_ring/raw_ring_area.hpp"
#include "transports/raw_ring/raw_ring_io.hpp"

namespace ferry::bench {

namespace {

using transport::RingConsumer;
using transport::RingProducer;

constexpr std::uint32_t kOwnedCapacity = 64;  // one message in flight
// The owner word's place in the buffer: the third line, apart from the
// payload's first (the sequence number) and from the adjacent-line prefetch.
constexpr std::size_t kOwnerWordOffset = 128;
static_assert(kOwnerWordOffset + sizeof(std::uint64_t) <= kRawInlineMax);

// The owner word's values; side 0 pings, side 1 echoes.
constexpr std::uint64_t kOwnerFree = 0;
constexpr std::uint64_t owned_by(int side) { return 1 + static_cast<std::uint64_t>(side); }
constexpr std::uint64_t pending_for(int side) { return 3 + static_cast<std::uint64_t>(side); }

class RawRingOwnedLatency final : public LatencyTransport {
 public:
  [[nodiscard]] std::string_view name() const noexcept override { return kRawRingOwned; }
  [[nodiscard]] std::string describe(Wait wait) const override {
    return fmt::format(
        "raw-ring passing a reference, plus an owner word changed by CAS at claim, hand-over, "
        "accept and release (the least a crash-safe pool does), {}; up to {} B as raw-ring",
        wait == Wait::Spin ? "try_pop polled" : "pop() with no spin (futex at once)",
        kRawInlineMax);
  }

  void prepare(const LatencyPlan& plan) override {
    if (raw_inline(plan.size)) {
      plain_ = make_raw_ring_latency();
      plain_->prepare(plan);
      return;
    }
    area_.emplace(*plan.domain, raw_geometry(plan.size, kOwnedCapacity), 2, 1, plan.size);
    // Nobody holds the buffer yet (the segment starts zeroed, kOwnerFree).
  }
  void finish() override {
    if (plain_) plain_->finish();
    plain_.reset();
    area_.reset();
  }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    if (plain_) return plain_->ping(plan, control);
    Side side(*this, plan, control, 0, "raw-ring-owned ping");
    if (!side.ready()) return 2;
    const std::uint64_t buffer = area_->buffer_offset(0);
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      if (!side.claim(buffer)) return false;
      write_seq(area_->at(buffer), seq);
      if (!side.hand_over(buffer) || !side.give(RawRef{seq, buffer, plan.size})) return false;
      const auto ref = side.take();
      if (!ref) return false;
      if (ref->offset != buffer || ref->seq != seq || !side.accept(buffer)) {
        report_error(control, fmt::format("raw-ring-owned ping: bad answer to {}", seq));
        return false;
      }
      const std::uint64_t carried = read_seq(area_->at(buffer));
      if (!side.release(buffer)) return false;
      if (carried != seq) {
        report_error(control, fmt::format("raw-ring-owned ping: the buffer of pong {} holds {}",
                                          seq, carried));
        return false;
      }
      return true;
    });
    // The stop carries its sequence number in the reference: no hand-over.
    (void)side.give(RawRef{kStopSeq, buffer, plan.size});
    (void)wait_finished(control, 1, kPeerTimeoutNs);
    return ok ? 0 : 3;
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    if (plain_) return plain_->echo(plan, control);
    Side side(*this, plan, control, 1, "raw-ring-owned echo");
    if (!side.ready()) return 2;
    for (;;) {
      const auto ref = side.take();
      if (!ref) return 3;
      if (ref->seq == kStopSeq) break;
      const std::uint64_t buffer = ref->offset;
      if (!side.accept(buffer)) return 3;
      const std::uint64_t seq = read_seq(area_->at(buffer));
      if (!side.release(buffer) || !side.claim(buffer)) return 3;
      write_seq(area_->at(buffer), seq);
      if (!side.hand_over(buffer) || !side.give(RawRef{seq, buffer, ref->size})) return 3;
    }
    mark_finished(control);
    return 0;
  }

 private:
  // One side's rings and its steps on the owner word.
  class Side {
   public:
    Side(const RawRingOwnedLatency& t, const LatencyPlan& plan, RunControl& control, int side,
         const char* who)
        : area_(*t.area_),
          plan_(plan),
          control_(control),
          side_(side),
          who_(who),
          out_(RingProducer::attach(area_.ring(side), area_.ring_bytes())),
          in_(RingConsumer::attach(area_.ring(1 - side), area_.ring_bytes())) {}

    // Attached and started with the other side; false (reported) otherwise.
    bool ready() {
      if (!out_ || !in_) {
        report_error(control_, fmt::format("{}: cannot attach the rings", who_));
        return false;
      }
      if (plan_.wait == Wait::Sleep) in_->set_spin_limit(0);
      if (!start_barrier(control_, 2, 10'000'000'000)) {
        report_error(control_, fmt::format("{}: the other side did not start", who_));
        return false;
      }
      msg_.resize(in_->max_message_size());
      return true;
    }

    bool claim(std::uint64_t buffer) { return step(buffer, kOwnerFree, owned_by(side_), "claim"); }
    // As the pool's transfer: the owner line and the payload's first line go
    // to the shared cache for the peer (CLDEMOTE; a NOP without it).
    bool hand_over(std::uint64_t buffer) {
      if (!step(buffer, owned_by(side_), pending_for(1 - side_), "hand over")) return false;
      transport::cache_demote(area_.at(buffer) + kOwnerWordOffset);
      transport::cache_demote(area_.at(buffer));
      return true;
    }
    bool accept(std::uint64_t buffer) {
      return step(buffer, pending_for(side_), owned_by(side_), "accept");
    }
    bool release(std::uint64_t buffer) {
      return step(buffer, owned_by(side_), kOwnerFree, "release");
    }

    bool give(const RawRef& ref) {
      std::memcpy(msg_.data(), &ref, sizeof ref);
      return raw_give(*out_, std::span(msg_.data(), sizeof ref), plan_.wait, control_, who_,
                      transport::Flush::Now);
    }
    // The next reference, checked against the buffers (never trust the peer).
    std::optional<RawRef> take() {
      const long n = raw_take(*in_, msg_, plan_.wait, control_, who_);
      if (n < 0) return std::nullopt;
      RawRef ref;
      std::memcpy(&ref, msg_.data(), sizeof ref);
      if (n != sizeof ref || (ref.seq != kStopSeq && !area_.valid(ref))) {
        report_error(control_, fmt::format("{}: a reference outside the buffer", who_));
        return std::nullopt;
      }
      return ref;
    }

   private:
    // One CAS of the owner word from `from` to `to`; any other value is a
    // broken hand-off, reported.
    bool step(std::uint64_t buffer, std::uint64_t from, std::uint64_t to, const char* what) {
      std::atomic_ref<std::uint64_t> word(
          *reinterpret_cast<std::uint64_t*>(area_.at(buffer) + kOwnerWordOffset));
      std::uint64_t seen = from;
      // SYNC: acq_rel, the order a pool's holder CASes use: release makes
      // this side's payload accesses happen before the next holder's
      // acquire of the word (the ring's own release/acquire already orders
      // the payload for the reader; the word is what a reclaimer would read).
      if (word.compare_exchange_strong(seen, to, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        return true;
      }
      report_error(control_,
                   fmt::format("{}: {}: the owner word was {}, not {}", who_, what, seen, from));
      return false;
    }

    const RawRingArea& area_;
    const LatencyPlan& plan_;
    RunControl& control_;
    int side_;
    const char* who_;
    std::expected<RingProducer, transport::RingError> out_;
    std::expected<RingConsumer, transport::RingError> in_;
    std::vector<std::byte> msg_;
  };

  std::optional<RawRingArea> area_;
  std::unique_ptr<LatencyTransport> plain_;  // up to kRawInlineMax: raw-ring itself
};

}  // namespace

std::unique_ptr<LatencyTransport> make_raw_ring_owned_latency() {
  return std::make_unique<RawRingOwnedLatency>();
}

}  // namespace ferry::bench
