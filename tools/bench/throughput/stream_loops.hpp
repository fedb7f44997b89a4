#pragma once
// The sender's and the receivers' loops, shared by every throughput transport.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "harness/run_control.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"  // kStopSeq, kPeerTimeoutNs
#include "throughput/throughput_transport.hpp"

namespace ferry::bench {

// Messages between two clock reads: few for small messages (a clock read is
// ~25 ns, a batched 64-byte message ~25 ns), every one for large ones. A
// power of two, tested with a mask: a division per message (the loops'
// `seq % every`) cost a batched 64 B stream a tenth of its rate.
[[nodiscard]] inline std::uint64_t clock_every(std::uint64_t size) noexcept {
  return std::bit_floor(std::max<std::uint64_t>(1, 16384 / size));
}

// After the start barrier, sends 0, 1, 2, ... for warmup + measure, then the
// stop message, then waits until every receiver saw it (leaving earlier
// could take a queue away with messages still in it). `send_one(seq)`
// returns false (reported) on an error.
template <class SendOne>
bool send_loop(const ThroughputPlan& plan, RunControl& control, SendOne&& send_one) {
  if (!start_barrier(control, 1 + plan.receivers, 10'000'000'000)) {
    report_error(control, "the receivers did not start within 10 s");
    return false;
  }
  const std::uint64_t every = clock_every(plan.size);
  const std::int64_t end = now_ns() + plan.warmup_ns + plan.measure_ns;
  for (std::uint64_t seq = 0;; ++seq) {
    if (!send_one(seq)) return false;
    if ((seq & (every - 1)) == 0 && now_ns() >= end) break;
  }
  if (!send_one(kStopSeq)) return false;
  if (!wait_finished(control, plan.receivers, kPeerTimeoutNs)) {
    report_error(control, "a receiver did not see the stop message");
    return false;
  }
  return true;
}

// Counts messages until the stop message, checking that each sequence
// number follows the previous one. Counting starts warmup_ns after the
// first message. `next(seq)` waits for the next message and gives its
// sequence number; false (reported) on an error or timeout.
template <class Next>
bool receive_loop(const ThroughputPlan& plan, RunControl& control, std::uint32_t index,
                  Next&& next) {
  ReceiverOutcome& out = control.receivers[index];
  if (!start_barrier(control, 1 + plan.receivers, 10'000'000'000)) {
    report_error(control, "the sender did not start within 10 s");
    return false;
  }
  const std::uint64_t every = clock_every(plan.size);
  std::uint64_t expected = 0, errors = 0, count = 0, n0 = 1;
  std::int64_t t_first = 0, t0 = 0;
  bool counting = false;
  for (;;) {
    std::uint64_t seq = 0;
    if (!next(seq)) return false;
    if (seq == kStopSeq) break;
    if (seq != expected) ++errors;
    expected = seq + 1;
    if (++count == 1) t0 = t_first = now_ns();
    if (!counting && (count & (every - 1)) == 0) {
      const std::int64_t now = now_ns();
      if (now - t_first >= plan.warmup_ns) {
        counting = true;
        t0 = now;
        n0 = count;
      }
    }
  }
  const std::int64_t t1 = now_ns();
  out.messages = count > n0 ? count - n0 : 0;
  out.elapsed_ns = t1 - t0;
  out.errors = errors;
  out.ok = out.messages > 0 && out.elapsed_ns > 0 ? 1 : 0;
  mark_finished(control);
  if (out.ok == 0) report_error(control, "a receiver got no message to count");
  return out.ok != 0;
}

// The sender's side of batches: send_one(seq) of send_loop writes message
// `seq` into the next slot of a batch of plan.batch messages and calls
// flush(first, count) once the batch is full or the stop message is in it.
// `write(slot, seq)` fills one message's bytes.
class BatchWriter {
 public:
  BatchWriter(std::uint64_t size, std::uint32_t batch)
      : size_(size), batch_(batch), bytes_(size * batch, std::byte{0x5a}) {}
  template <class Write, class Flush>
  bool add(std::uint64_t seq, Write&& write, Flush&& flush) {
    write(bytes_.data() + filled_ * size_, seq);
    if (++filled_ < batch_ && seq != kStopSeq) return true;
    const std::uint32_t n = filled_;
    filled_ = 0;
    return flush(std::span<const std::byte>(bytes_.data(), n * size_), n);
  }

 private:
  std::uint64_t size_;
  std::uint32_t batch_;
  std::vector<std::byte> bytes_;
  std::uint32_t filled_ = 0;
};

// The receiver's side: hands out one message at a time (for receive_loop)
// from batches that refill(buffer, max) takes, returning how many
// messages it copied (0: none came; it reported why).
class BatchReader {
 public:
  BatchReader(std::uint64_t size, std::uint32_t batch) : size_(size), bytes_(size * batch) {}
  template <class Refill>
  bool next(std::uint64_t& seq, Refill&& refill) {
    if (at_ == count_) {
      at_ = 0;
      count_ = refill(std::span<std::byte>(bytes_), bytes_.size() / size_);
      if (count_ == 0) return false;
    }
    seq = read_seq(bytes_.data() + at_++ * size_);
    return true;
  }

 private:
  std::uint64_t size_;
  std::vector<std::byte> bytes_;
  std::size_t at_ = 0;
  std::size_t count_ = 0;
};

}  // namespace ferry::bench
