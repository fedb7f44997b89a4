// The publisher's port: publish() beyond the inlined lane, loans, and the
// port's counts. No allocation, no lock, no system call unless a subscriber
// sleeps (its doorbell) or we must wait (block policy).
//
// A sample travels inline (copied into each queue's slot) when it fits a
// slot, else as a pool reference: one chunk, one reference given to each
// subscriber's node (publish_policy.cpp applies the topic's policy to
// both).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <new>
#include <span>
#include <thread>

#include "ferry/detail/ports.hpp"
#include "node_runtime.hpp"
#include "publish_policy.hpp"
#include "publisher_state.hpp"

namespace ferry::detail {

static_assert(transport::kMaxPoolClasses <= 128, "a ChunkRef never sets kScratchLoan's bit");
// Loans that fit a ring slot are written into buffers of the publisher's
// own and copied into the slots at publish: no pool chunk, no atomic
// instruction (docs/loans.md). kScratchLoans buffers of scratch_stride_
// bytes, 64-byte aligned; bit k of scratch_free_ set: buffer k is free.
// LoanedChunk::ref of one is kScratchLoan | k: a bit no ChunkRef sets (its
// class byte, the top one, stays below transport::kMaxPoolClasses = 32).
static_assert(std::has_single_bit(PublisherPort::kScratchLoans) &&
                  PublisherPort::kScratchLoans <= 32,
              "scratch_free_ is a bit mask, k = ref & (kScratchLoans - 1)");

namespace {

using transport::ChunkRef;

// Sends chunk `ref` (holding `size` bytes); the publisher's own reference
// goes to the topic's history, or is dropped: the subscribers' references
// keep the chunk alive.
PublishResult deliver_chunk(PublisherState& state, ChunkRef ref, std::size_t size,
                            const transport::SlotMeta& info) noexcept {
  const PooledSlot slot{ref.pack(), size};
  const auto bytes = std::as_bytes(std::span(&slot, 1));
  bool handed = false;
  const Outgoing out{bytes.data(), 1,   static_cast<std::uint32_t>(bytes.size()), kSlotPooled,
                     info,         ref, state.keeps_history() ? nullptr : &handed};
  const PublishResult result = deliver(state, out);
  if (handed) return result;  // our reference went to the subscriber
  if (!state.remember(bytes, kSlotPooled, info))
    (void)state.pool->pool.release(ref, state.pool->owner);
  return result;
}

// The lane's pooled publish: one queue, no history, no observer, and room
// for the slot, so the publisher's reference is handed to the subscriber's
// node (Pool::transfer, one CAS) and the slot pushed as the lane pushes an
// inline sample (Flush::IfAlone: a reader waiting for it sees it sooner).
// The general path does the same through the policy engine, with a give
// before and a publish without the flush after. NotHere: nothing happened
// (no lane now, no room, the transfer refused); the general path decides.
enum class HandOver : std::uint8_t { Delivered, Dropped, NotHere };
HandOver hand_over_pooled(PublisherState& state, std::uint64_t packed, std::size_t used,
                          const transport::SlotMeta& info) noexcept {
  if (state.lane()->open() == nullptr) return HandOver::NotHere;
  PublisherQueueEnd& q = *state.lane_queue();
  if (!q.producer.room_for_next()) return HandOver::NotHere;
  const ChunkRef ref = ChunkRef::unpack(packed);
  if (!state.pool->pool.transfer(ref, state.pool->owner, q.peer_owner)) return HandOver::NotHere;
  const PooledSlot slot{packed, used};
  if (q.producer.try_push(std::as_bytes(std::span(&slot, 1)), kSlotPooled, info,
                          transport::Flush::IfAlone)) [[likely]] {
    // The transfer demoted the chunk's lines; the slot follows them. Not
    // for inline samples: in a stream it cost their throughput.
    q.producer.demote_last_slot();
    return HandOver::Delivered;
  }
  // Not with room ensured by this, the ring's one producer; should the ring
  // refuse anyway (its indices broken meanwhile), the subscriber never sees
  // the reference: it goes back, and the sample counts as dropped.
  (void)state.pool->pool.revoke(ref, state.pool->owner, q.peer_owner);
  q.producer.count_dropped(1);
  return HandOver::Dropped;
}

// A result that counts one queue in `field`.
PublishResult one_result(std::uint32_t PublishResult::*field) noexcept {
  PublishResult r;
  r.*field = 1;
  return r;
}

}  // namespace

// publisher_id_ is the port's first id from ferryd (its port identity): ids
// are never reused in a domain (a restarted ferryd continues the count), and
// this one stays the same when the port re-registers with a restarted daemon.
// next_sequence() is the sequence the next publish carries: services number
// their calls by it, and a server's response carries the sequence of the
// call it answers (set_next_sequence; docs/services.md).
PublisherPort::PublisherPort(std::shared_ptr<NodeRuntime> runtime,
                             std::shared_ptr<PublisherState> state)
    : runtime_(std::move(runtime)),
      state_(std::move(state)),
      lane_(state_->lane()),
      publisher_id_(state_->publisher_id) {
  // The buffers for small loans, made now so that no loan allocates.
  scratch_stride_ = (static_cast<std::size_t>(state_->inline_max) + transport::kCacheLine - 1) /
                    transport::kCacheLine * transport::kCacheLine;
  scratch_capacity_ = state_->inline_max;
  max_loans_ = state_->config.limits.max_loans;
  if (scratch_stride_ != 0) {
    scratch_.reset(static_cast<std::byte*>(
        ::operator new (scratch_stride_* kScratchLoans, std::align_val_t{transport::kCacheLine})));
    scratch_free_ = (1U << kScratchLoans) - 1;
  }
  // loan_many's room (loan_many.cpp): a batch buffer of one queue's worth
  // when samples fit a slot, a chunk array of max_loans when they do not.
  // A large buffer is mapped, not touched: its pages cost nothing unless used.
  const std::uint64_t sample = state_->config.sample_size;
  if (sample != 0 && sample <= state_->inline_max) {
    batch_capacity_ = state_->config.capacity;
    batch_buffer_.reset(static_cast<std::byte*>(
        ::operator new (batch_capacity_* sample, std::align_val_t{transport::kCacheLine})));
  } else if (sample > state_->inline_max) {
    batch_capacity_ = max_loans_;
    batch_chunks_ = std::make_unique<LoanedChunk[]>(max_loans_);
  }
}

void PublisherPort::AlignedFree::operator()(std::byte* p) const noexcept {
  ::operator delete (p, std::align_val_t{transport::kCacheLine});
}

PublisherPort::~PublisherPort() { runtime_->destroy_port(*state_); }

PublishResult PublisherPort::publish_general(const void* data, std::uint32_t size,
                                             const transport::SlotMeta& info) noexcept {
  if (size <= state_->inline_max) {
    // The inlined lane did not apply (a history topic, several queues, a
    // full queue, the first publish after a change): a batch of one.
    return deliver(*state_,
                   Outgoing{static_cast<const std::byte*>(data), 1, size, kSlotInline, info});
  }
  // Too large for a slot: copy it into a chunk once, and share the chunk.
  auto chunk = loan(size);
  if (!chunk) {
    // No chunk (pool exhausted, max_loans): every queue misses this sample,
    // and says so.
    PublishResult result;
    result.error = chunk.error();
    auto& ends = state_->queue_ends();
    for (auto& c : ends) c->producer.count_dropped();
    result.dropped = static_cast<std::uint32_t>(state_->subscriber_queues());  // observers aside
    return result;
  }
  std::memcpy(chunk->data, data, size);
  --loans_out_;
  const ChunkRef ref = ChunkRef::unpack(std::exchange(chunk->ref, 0));
  return deliver_chunk(*state_, ref, size, info);
}

// loan() takes a scratch buffer inline (ports.hpp): out of line, the
// chunk came back through memory, and reading its fields before the stores
// that wrote them had left the store buffer waited for the previous
// publish's stores (a cross-core transfer each): 64 B loan throughput was
// 0.4x the inline publish's once the publish had no fence.
std::expected<LoanedChunk, ErrorCode> PublisherPort::loan_general(std::size_t size) noexcept {
  PublisherState& s = *state_;
  (void)s.queue_ends();  // one acquire load: picks up a death sentence
  if (s.dead_seen) [[unlikely]]
    return std::unexpected(s.dead_error());
  if (loans_out_ >= max_loans_) return std::unexpected(ErrorCode::TooManyLoans);
  if (size <= scratch_capacity_ && scratch_free_ != 0) {
    // Fits a slot: one of our own buffers (publish_loan copies it inline).
    const auto k = static_cast<std::uint32_t>(std::countr_zero(scratch_free_));
    scratch_free_ &= ~(1U << k);
    ++loans_out_;
    return LoanedChunk{scratch_.get() + k * scratch_stride_, scratch_capacity_, kScratchLoan | k};
  }
  auto ref = s.pool->pool.allocate(size, s.pool->owner);
  if (!ref) {
    return std::unexpected(ref.error() == transport::PoolError::TooLarge
                               ? ErrorCode::TooLarge
                               : ErrorCode::PoolExhausted);
  }
  auto payload = s.pool->pool.resolve(*ref);
  if (!payload) {
    (void)s.pool->pool.release(*ref, s.pool->owner);
    return std::unexpected(ErrorCode::CorruptData);
  }
  ++loans_out_;
  return LoanedChunk{payload->data(), payload->size(), ref->pack()};
}

PublishResult PublisherPort::publish_pooled_loan(LoanedChunk& chunk, std::size_t size) noexcept {
  if (chunk.ref == 0) return PublishResult{};
  --loans_out_;
  const std::uint64_t packed = std::exchange(chunk.ref, 0);
  const std::size_t used = std::min(size, chunk.capacity);
  if (used > state_->inline_max) {
    lane_->prefetch(transport::kPooledSlotBytes);  // overlaps the clock read, as publish()
    const transport::SlotMeta info = next_info();
    // Each result is built where it is returned: a PublishResult assembled
    // on the stack from narrow stores and copied out wide was a failed
    // store forward, which waited for the slot's stores to reach the other
    // core (3 MB ping-pong p50 310 -> 250 ns, AMD EPYC).
    switch (hand_over_pooled(*state_, packed, used, info)) {
      case HandOver::Delivered:
        return one_result(&PublishResult::delivered);
      case HandOver::Dropped:
        return one_result(&PublishResult::dropped);
      case HandOver::NotHere:
        break;
    }
    return deliver_chunk(*state_, ChunkRef::unpack(packed), used, info);
  }
  // A pool chunk that fits a slot (all our scratch buffers were out when it
  // was loaned) travels inline, as publish() would send it: copying a few
  // lines that are in our cache costs less than a reference costs its
  // reader (a CAS on the chunk's metadata line to accept it, the payload
  // line, another CAS to release it: three cross-core transfers). It goes
  // back to the pool from our cache, and the next pool loan takes it again
  // (Pool::allocate tries the chunk this handle freed last first).
  // docs/loans.md.
  const auto bytes = static_cast<std::uint32_t>(used);
  const transport::SlotMeta info = next_info();
  PublishResult result;
  if (lane_->try_publish(chunk.data, bytes, info)) [[likely]] {
    result.delivered = 1;
  } else {
    result = publish_general(chunk.data, bytes, info);
  }
  give_back(packed);
  return result;
}

PublishResult PublisherPort::publish_scratch_general(const std::byte* data, std::uint32_t size,
                                                     const transport::SlotMeta& info,
                                                     std::uint64_t packed) noexcept {
  PublishResult result = publish_general(data, size, info);
  free_scratch(packed);
  return result;
}

void PublisherPort::return_loan(LoanedChunk& chunk) noexcept {
  if (chunk.ref == 0) return;
  --loans_out_;
  give_back(std::exchange(chunk.ref, 0));
}

void PublisherPort::give_back(std::uint64_t packed) noexcept {
  if ((packed & kScratchLoan) != 0) {
    free_scratch(packed);
    return;
  }
  (void)state_->pool->pool.release(ChunkRef::unpack(packed), state_->pool->owner);
}

std::uint32_t PublisherPort::subscriber_count() const noexcept {
  // SYNC: acquire, pairs with the release fetch_add in PublisherState::
  // on_matched(): a publish after seeing N reaches those N queues.
  return state_->matched.load(std::memory_order_acquire);
}

std::uint32_t PublisherPort::observer_count() const noexcept {
  // SYNC: acquire, pairs with the release fetch_add in PublisherState::on_matched().
  return state_->observers.load(std::memory_order_acquire);
}

// Polls subscriber_count() until it is at least `count` (true) or `timeout`
// passed (false). Not for the hot path: it sleeps between polls.
bool PublisherPort::wait_for_subscribers(std::uint32_t count,
                                         std::chrono::nanoseconds timeout) const noexcept {
  // Matching happens on the node's runtime thread; a poll every millisecond
  // sees it soon enough for a caller that waits before its first publish.
  constexpr std::chrono::nanoseconds kPoll = std::chrono::milliseconds(1);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (subscriber_count() < count) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(deadline - now, kPoll));
  }
  return true;
}

const std::string& PublisherPort::topic() const noexcept { return state_->topic; }

std::uint32_t PublisherPort::capacity() const noexcept { return state_->config.capacity; }

std::size_t PublisherPort::sample_size() const noexcept {
  return static_cast<std::size_t>(state_->config.sample_size);
}

std::size_t PublisherPort::max_size() const noexcept {
  return static_cast<std::size_t>(state_->config.max_size);
}

}  // namespace ferry::detail
