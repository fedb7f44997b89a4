#pragma once
// Untyped ports behind Publisher<T> and Subscriber<T>. What touches shared
// memory lives in core/src (where the members are described), except the
// shortcut of a port with one queue (lane.hpp), inlined here.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <utility>

#include "ferry/detail/held_samples.hpp"
#include "ferry/detail/lane.hpp"
#include "ferry/detail/publish_clock.hpp"
#include "ferry/error.hpp"
#include "ferry/publish_result.hpp"
#include "ferry/sample_info.hpp"

namespace ferry::detail {

class NodeRuntime;
class PublisherState;
class SubscriberState;
class WaitSetCore;

// take(timeout)'s polls of its queues before it sleeps on its doorbell,
// unless NodeOptions::take_spin or Subscriber::set_take_spin say otherwise.
inline constexpr std::uint32_t kDefaultTakeSpin = 1024;

// A pool chunk loaned to the user: write up to `capacity` bytes at `data`.
struct LoanedChunk {
  std::byte* data = nullptr;
  std::size_t capacity = 0;
  // ChunkRef::pack(), or kScratchLoan | k for the publisher's own buffer k
  // (a loan that fits a ring slot); 0 once published or returned.
  std::uint64_t ref = 0;
};

// LoanedChunk::ref of a scratch buffer: a bit no ChunkRef sets.
inline constexpr std::uint64_t kScratchLoan = std::uint64_t{1} << 63;

// A batch of loans (loan_many, docs/batches.md): `count` samples of `size`
// bytes. Inline: back to back at `data`, the publisher's batch buffer (they
// fit a ring slot and are copied into the slots at publish, as small loans
// are). Pooled: one pool chunk each, `chunks[i]` (the port's array). Empty:
// nothing loaned (count 0), and nothing to give back.
struct LoanedBatch {
  enum class Kind : std::uint8_t { Empty, Inline, Pooled };
  std::byte* data = nullptr;
  LoanedChunk* chunks = nullptr;
  std::size_t count = 0;
  std::uint32_t size = 0;
  Kind kind = Kind::Empty;
  [[nodiscard]] std::byte* sample(std::size_t i) const noexcept {
    return kind == Kind::Pooled ? chunks[i].data : data + i * size;
  }
};

class PublisherPort {
 public:
  PublisherPort(std::shared_ptr<NodeRuntime> runtime, std::shared_ptr<PublisherState> state);
  ~PublisherPort();
  PublisherPort(const PublisherPort&) = delete;
  PublisherPort& operator=(const PublisherPort&) = delete;

  // Copies `size` bytes into every matched subscriber's queue (through one
  // pool chunk when the sample does not fit a ring slot).
  FERRY_HOT PublishResult publish(const void* data, std::uint32_t size) noexcept {
    lane_->prefetch(size);  // before the clock read, which it overlaps (lane.hpp)
    const transport::SlotMeta info = next_info();
    if (lane_->try_publish(data, size, info)) [[likely]] {
      PublishResult result;
      result.delivered = 1;
      return result;
    }
    return publish_general(data, size, info);
  }
  // `count` samples of `size` bytes each, back to back at `data`.
  PublishResult publish_many(const void* data, std::size_t count, std::uint32_t size) noexcept;
  // A chunk of at least `size` bytes (TooManyLoans, PoolExhausted, TooLarge).
  // Inline while the lane is open and a scratch buffer will do (why:
  // publisher_port.cpp, loan_general).
  FERRY_HOT std::expected<LoanedChunk, ErrorCode> loan(std::size_t size) noexcept {
    if (size <= scratch_capacity_ && scratch_free_ != 0 && loans_out_ < max_loans_ &&
        lane_->open() != nullptr) [[likely]] {
      const auto k = static_cast<std::uint32_t>(std::countr_zero(scratch_free_));
      scratch_free_ &= ~(1U << k);
      ++loans_out_;
      return LoanedChunk{scratch_.get() + k * scratch_stride_, scratch_capacity_, kScratchLoan | k};
    }
    return loan_general(size);
  }
  // Sends the first `size` bytes of a loaned chunk; the chunk is consumed
  // (its ref becomes 0). A scratch buffer goes inline, as publish() would.
  FERRY_HOT PublishResult publish_loan(LoanedChunk& chunk, std::size_t size) noexcept {
    if ((chunk.ref & kScratchLoan) == 0) [[unlikely]]
      return publish_pooled_loan(chunk, size);
    const auto bytes = static_cast<std::uint32_t>(std::min(size, chunk.capacity));
    lane_->prefetch(bytes);
    const transport::SlotMeta info = next_info();
    const std::uint64_t packed = std::exchange(chunk.ref, 0);
    --loans_out_;
    if (lane_->try_publish(chunk.data, bytes, info)) [[likely]] {
      free_scratch(packed);
      PublishResult result;
      result.delivered = 1;
      return result;
    }
    return publish_scratch_general(chunk.data, bytes, info, packed);
  }
  // An unpublished loan goes back to the pool.
  void return_loan(LoanedChunk& chunk) noexcept;
  // `count` loans of `size` bytes at once (loan_many.cpp): TooManyLoans
  // (a batch is out already, or max_loans would be passed), InvalidArgument
  // (more samples than the batch buffer holds), PoolExhausted, TooLarge.
  std::expected<LoanedBatch, ErrorCode> loan_many(std::size_t count, std::uint32_t size) noexcept;
  // Publishes every sample of a batch, in order, as publish_many would; the
  // batch is consumed (its kind becomes Empty).
  PublishResult publish_loan_many(LoanedBatch& batch) noexcept;
  // Keeps a batch's first `count` samples; the others go back.
  void shrink_loan_many(LoanedBatch& batch, std::size_t count) noexcept;
  // An unpublished batch goes back.
  void return_loan_many(LoanedBatch& batch) noexcept;
  // The most samples one loan_many() can take: the topic's capacity when
  // its samples fit a slot, max_loans when they do not, 0 on a bytes topic.
  [[nodiscard]] std::size_t loan_many_capacity() const noexcept { return batch_capacity_; }
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept;
  [[nodiscard]] std::uint32_t observer_count() const noexcept;
  [[nodiscard]] bool wait_for_subscribers(std::uint32_t count,
                                          std::chrono::nanoseconds timeout) const noexcept;
  [[nodiscard]] const std::string& topic() const noexcept;
  [[nodiscard]] std::size_t sample_size() const noexcept;
  [[nodiscard]] std::size_t max_size() const noexcept;  // bytes topics
  // What every sample of this publisher says it came from.
  [[nodiscard]] std::uint64_t publisher_id() const noexcept { return publisher_id_; }
  // The sequence the next publish carries (services: docs/services.md).
  [[nodiscard]] std::uint64_t next_sequence() const noexcept { return next_sequence_; }
  void set_next_sequence(std::uint64_t sequence) noexcept { next_sequence_ = sequence; }
  // The topic's queue capacity.
  [[nodiscard]] std::uint32_t capacity() const noexcept;
  // Loans taken and not yet published or returned (user's thread).
  [[nodiscard]] std::uint32_t loans_out() const noexcept { return loans_out_; }

 private:
  // A published or returned loan's buffer or chunk goes back (LoanedChunk::ref).
  void give_back(std::uint64_t packed) noexcept;
  FERRY_HOT void free_scratch(std::uint64_t packed) noexcept {
    scratch_free_ |= 1U << (packed & (kScratchLoans - 1));
  }
  // loan() when no scratch buffer will do: a pool chunk, or the refusal.
  std::expected<LoanedChunk, ErrorCode> loan_general(std::size_t size) noexcept;
  // publish_loan() of a pool chunk (or of an empty loan: nothing happens).
  PublishResult publish_pooled_loan(LoanedChunk& chunk, std::size_t size) noexcept;
  // publish_loan() of a scratch buffer the lane did not take.
  PublishResult publish_scratch_general(const std::byte* data, std::uint32_t size,
                                        const transport::SlotMeta& info,
                                        std::uint64_t packed) noexcept;
  // Every case the lane does not cover: the topic's policy over all queues.
  PublishResult publish_general(const void* data, std::uint32_t size,
                                const transport::SlotMeta& info) noexcept;
  // The next publish()'s metadata: its sequence number (one per call,
  // whatever becomes of the sample) and the time now.
  [[nodiscard]] FERRY_HOT transport::SlotMeta next_info() noexcept {
    return transport::SlotMeta{next_sequence_++, publisher_id_, publish_time_ns()};
  }

  std::shared_ptr<NodeRuntime> runtime_;  // keeps the connection while the port lives
  std::shared_ptr<PublisherState> state_;
  const PublishLane* lane_;          // in *state_
  std::uint64_t publisher_id_;       // its port identity (docs/concepts/glossary.md)
  std::uint64_t next_sequence_ = 0;  // user's thread
                                     // The publisher's own buffers for loans that fit a ring slot
                                     // (publisher_port.cpp). User's thread only.
 public:
  static constexpr std::uint32_t kScratchLoans = 4;

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte[], AlignedFree> scratch_;
  std::size_t scratch_stride_ = 0;
  std::uint32_t scratch_free_ = 0;
  std::uint32_t scratch_capacity_ = 0;  // bytes a scratch loan offers: the topic's inline_max
  std::uint32_t loans_out_ = 0;         // user's thread: loans not yet published or returned
  std::uint32_t max_loans_ = 0;         // the topic's limits.max_loans
  // loan_many (loan_many.cpp), user's thread only: the batch buffer for
  // samples that fit a slot (batch_capacity_ samples of the topic's sample
  // size, made with the port so that no loan allocates), the chunks of a
  // pooled batch (max_loans_ entries), and whether a batch is out (one at a
  // time: it counts as one loan when inline, one per chunk when pooled).
  std::unique_ptr<std::byte[], AlignedFree> batch_buffer_;
  std::size_t batch_capacity_ = 0;
  std::unique_ptr<LoanedChunk[]> batch_chunks_;
  bool batch_out_ = false;
};

// One sample taken out of a queue and held by the user.
struct TakenSample {
  const void* data = nullptr;
  std::uint32_t size = 0;
  std::uint32_t token = 0;  // hands the sample back to HeldSamples::release
};

enum class TakeStatus : std::uint8_t { Taken, Empty, Failed };

class SubscriberPort {
 public:
  SubscriberPort(std::shared_ptr<NodeRuntime> runtime, std::shared_ptr<SubscriberState> state);
  ~SubscriberPort();
  SubscriberPort(const SubscriberPort&) = delete;
  SubscriberPort& operator=(const SubscriberPort&) = delete;

  // Takes the next sample, waiting up to `timeout` (zero: never waits).
  // Empty is not an error; Failed sets `error`.
  FERRY_HOT TakeStatus take(TakenSample& out, ErrorCode& error,
                            std::chrono::nanoseconds timeout) noexcept {
    LaneTaken taken;
    switch (lane_->try_take(taken)) {
      case LaneResult::Taken:
        out = TakenSample{taken.data, taken.size, taken.token};
        return TakeStatus::Taken;
      case LaneResult::Empty:
        if (timeout.count() <= 0) return TakeStatus::Empty;
        break;
      case LaneResult::Popped:
        return take_popped(taken, out, error, timeout);
      case LaneResult::General:
        break;
    }
    return take_general(out, error, timeout);
  }
  // Copies up to `max` samples of `size` bytes into `out`.
  std::expected<std::size_t, ErrorCode> take_many(void* out, std::size_t max, std::uint32_t size,
                                                  std::chrono::nanoseconds timeout) noexcept;
  [[nodiscard]] std::uint32_t publisher_count() const noexcept;
  [[nodiscard]] const std::string& topic() const noexcept;
  [[nodiscard]] std::size_t sample_size() const noexcept;
  // take(timeout)'s polls before it sleeps (kDefaultTakeSpin).
  void set_take_spin(std::uint32_t polls) noexcept { take_spin_ = polls; }
  [[nodiscard]] std::uint32_t take_spin() const noexcept { return take_spin_; }

  // For a WaitSet (user's thread): is there news?
  bool wait_ready() noexcept;
  // The doorbell our publishers and the runtime thread ring (shared memory).
  [[nodiscard]] transport::DoorbellWord& doorbell() noexcept;
  // The WaitSet this port is attached to (null: none) and its index there.
  std::shared_ptr<WaitSetCore> wait_set;
  std::size_t wait_index = 0;
  // At attach: changes announced so far are not news to the WaitSet.
  void forget_changes() noexcept;
  // Whether the port's node belongs to the process this one was forked from.
  [[nodiscard]] bool inherited() const noexcept;
  // Where taken samples are released (fixed for the port's life).
  [[nodiscard]] HeldSamples* held() const noexcept { return held_; }

 private:
  // Every case the lane does not cover: all queues, fairly; waits.
  TakeStatus take_general(TakenSample& out, ErrorCode& error,
                          std::chrono::nanoseconds timeout) noexcept;
  // The lane popped a slot that is not an inline sample.
  TakeStatus take_popped(const LaneTaken& popped, TakenSample& out, ErrorCode& error,
                         std::chrono::nanoseconds timeout) noexcept;

  std::shared_ptr<NodeRuntime> runtime_;  // keeps the connection while the port lives
  std::shared_ptr<SubscriberState> state_;
  HeldSamples* held_;
  const TakeLane* lane_;  // in *state_
  std::uint32_t take_spin_ = kDefaultTakeSpin;
  std::uint32_t changes_seen_ = 0;  // wait_ready(): the state's change count it last saw
};

// Returns a held sample's buffer; safe from any thread, even after the
// subscriber is gone (its buffers are freed once every sample is back).
inline void release_held(HeldSamples* held, std::uint32_t token) noexcept { held->release(token); }

}  // namespace ferry::detail
