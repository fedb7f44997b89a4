// The floor of a cross-core stream: messages copied into a ring of slots
// that are their own size rounded up to whole cache lines (a 64 B message
// is one line: no slot header, no metadata), behind two index words on
// lines of their own. The sender stores `sent` once every --batch messages
// (and with the stop message), the receiver polls it and copies each
// message out (as ferry's take() and raw-ring do), and stores `taken` once
// every eighth of the ring, which the sender reads only when the ring looks
// full. What is left is what any shared-memory stream moves at least: each
// message's lines, from the receiver's core (which read them last) to the
// sender's for its stores and back, and one index line per batch. The
// sender asks for the lines ahead of its writes (PREFETCHW), as ferry's
// batches do.
//
// Why an index, not a sequence word in each message polled by the receiver:
// measured so (64 B, pinned), the receiver's polls took each line from the
// sender while it was writing it, and the stream ran at 22 M msg/s, below
// the batched ring's 32 M. Up to 4 KiB, polled only (--wait spin). See
// docs/benchmarks.md.
#include <fmt/format.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "ferry/bench/spin.hpp"
#include "ferry/transport/platform.hpp"
#include "harness/bench_config.hpp"
#include "harness/seq.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"

namespace ferry::bench {

namespace {

constexpr std::size_t kLine = transport::kCacheLine;
// Each receiver's ring: 64 KiB of slots, in every core's L2.
constexpr std::size_t kRingBytes = 64 * 1024;
static_assert(kRingBytes / kCachelineStreamMax >= 8, "a ring holds at least 8 messages");
// How far ahead of its writes the sender asks for lines: 16 messages (tried:
// 16 to 64 messages ahead measured the same; asking for a whole batch's
// lines when it begins, as ferry's batches do, measured 15% less here).
constexpr std::size_t kPrefetchSlots = 16;

// An index word on a line of its own.
struct alignas(kLine) Index {
  std::atomic<std::uint64_t> value{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

[[nodiscard]] std::size_t slot_bytes(std::uint64_t size) noexcept {
  return (static_cast<std::size_t>(size) + kLine - 1) / kLine * kLine;
}

// One receiver's ring in the shared mapping: `sent`, `taken`, then the slots.
class LineRing {
 public:
  LineRing(std::byte* base, std::uint64_t size, std::uint32_t batch)
      : sent_(reinterpret_cast<Index*>(base)),
        taken_(reinterpret_cast<Index*>(base + kLine)),
        slots_(base + 2 * kLine),
        size_(static_cast<std::size_t>(size)),
        stride_(slot_bytes(size)),
        count_(kRingBytes / stride_),
        end_(slots_ + count_ * stride_),
        // At most the ring less the receiver's stride of progress: a longer
        // batch could fill the ring before it is published while the
        // receiver's last progress lags behind what it read (both wait).
        batch_(batch < count_ - count_ / 8 ? batch : count_ - count_ / 8),
        taken_every_(count_ / 8),
        put_at_(slots_),
        take_at_(slots_),
        batch_left_(batch_),
        taken_left_(taken_every_) {}

  [[nodiscard]] static std::size_t bytes() noexcept { return 2 * kLine + kRingBytes; }
  // Before the sides start: nothing sent, nothing taken.
  void reset() noexcept {
    new (sent_) Index{};
    new (taken_) Index{};
  }

  // The sender: message n (its `size` bytes) into the next slot once the
  // receiver has copied out what that slot held; `sent` stored after every
  // batch and with the last message (`last`). Counters, not divisions: a
  // division per message would be most of what a 64 B message costs here.
  bool put(std::uint64_t n, const std::byte* msg, bool last) noexcept {
    if (n - cached_taken_ >= count_) {
      const bool room = spin_until(
          [&] {
            // SYNC: acquire, pairs with the receiver's release store of taken:
            // its copies out of the slots it counted happen before we overwrite them.
            cached_taken_ = taken_->value.load(std::memory_order_acquire);
            return n - cached_taken_ < count_;
          },
          kPeerTimeoutNs);
      if (!room) return false;
    }
    const std::byte* ahead = advance(put_at_, kPrefetchSlots);
    for (std::size_t b = 0; b < stride_; b += kLine) transport::prefetch_for_write(ahead + b);
    std::memcpy(put_at_, msg, size_);
    put_at_ = advance(put_at_, 1);
    if (--batch_left_ == 0 || last) {
      batch_left_ = batch_;
      // SYNC: release, pairs with the receiver's acquire load of sent: the
      // messages copied in before are visible.
      sent_->value.store(n + 1, std::memory_order_release);
    }
    return true;
  }

  // The receiver: message n copied into `out`; false when it did not come
  // within the peer timeout.
  bool take(std::uint64_t n, std::byte* out) noexcept {
    if (n >= cached_sent_) {
      const bool came = spin_until(
          [&] {
            // SYNC: acquire, pairs with the sender's release store of sent.
            cached_sent_ = sent_->value.load(std::memory_order_acquire);
            return n < cached_sent_;
          },
          kPeerTimeoutNs);
      if (!came) return false;
    }
    std::memcpy(out, take_at_, size_);
    take_at_ = advance(take_at_, 1);
    if (--taken_left_ == 0) {
      taken_left_ = taken_every_;
      // SYNC: release, pairs with the sender's acquire load of taken: our
      // copies out of the slots up to n happen before it overwrites them.
      taken_->value.store(n + 1, std::memory_order_release);
    }
    return true;
  }

 private:
  // The slot k slots after `p`, wrapping at the ring's end.
  [[nodiscard]] std::byte* advance(std::byte* p, std::size_t k) const noexcept {
    p += k * stride_;
    return p >= end_ ? p - count_ * stride_ : p;
  }

  Index* sent_;
  Index* taken_;
  std::byte* slots_;
  std::size_t size_;
  std::size_t stride_;
  std::size_t count_;
  std::byte* end_;
  std::size_t batch_;
  std::size_t taken_every_;
  std::byte* put_at_;   // the sender's next slot
  std::byte* take_at_;  // the receiver's next slot
  std::size_t batch_left_;
  std::size_t taken_left_;
  std::uint64_t cached_taken_ = 0;  // the sender's copy of taken
  std::uint64_t cached_sent_ = 0;   // the receiver's copy of sent
};

class CachelineThroughput final : public ThroughputTransport {
 public:
  CachelineThroughput() = default;
  ~CachelineThroughput() override { unmap(); }
  CachelineThroughput(const CachelineThroughput&) = delete;
  CachelineThroughput& operator=(const CachelineThroughput&) = delete;

  [[nodiscard]] std::string_view name() const noexcept override { return kCacheline; }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    return "messages copied into a ring of whole cache lines (no slot header or metadata), one "
           "ring per receiver, an index stored once a batch (--batch) and polled: the floor of a "
           "cross-core stream, up to 4 KiB";
  }

  void prepare(const ThroughputPlan& plan) override {
    unmap();
    bytes_ = LineRing::bytes() * plan.receivers;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      bytes_ = 0;
      throw std::runtime_error("cacheline: cannot map the rings");
    }
    base_ = static_cast<std::byte*>(p);
    for (std::uint32_t k = 0; k < plan.receivers; ++k) ring(k, plan).reset();
  }
  void finish() override { unmap(); }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    std::vector<LineRing> rings;
    for (std::uint32_t k = 0; k < plan.receivers; ++k) rings.push_back(ring(k, plan));
    std::vector<std::byte> msg(plan.size, std::byte{0x5a});
    std::uint64_t n = 0;
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      for (auto& r : rings) {
        if (!r.put(n, msg.data(), seq == kStopSeq)) {
          report_error(control, "cacheline sender: no room within the peer timeout");
          return false;
        }
      }
      ++n;
      return true;
    });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    LineRing r = ring(index, plan);
    std::vector<std::byte> buf(plan.size);
    std::uint64_t n = 0;
    const bool ok = receive_loop(plan, control, index, [&](std::uint64_t& seq) {
      if (!r.take(n++, buf.data())) {
        report_error(control, "cacheline receiver: no message within the peer timeout");
        return false;
      }
      seq = read_seq(buf.data());
      return true;
    });
    return ok ? 0 : 3;
  }

 private:
  [[nodiscard]] LineRing ring(std::uint32_t k, const ThroughputPlan& plan) const noexcept {
    return LineRing(base_ + k * LineRing::bytes(), plan.size, plan.batch);
  }
  void unmap() noexcept {
    if (base_ != nullptr) ::munmap(base_, bytes_);
    base_ = nullptr;
    bytes_ = 0;
  }

  std::byte* base_ = nullptr;  // MAP_SHARED: the forked sides share it
  std::size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_cacheline_throughput() {
  return std::make_unique<CachelineThroughput>();
}

}  // namespace ferry::bench
