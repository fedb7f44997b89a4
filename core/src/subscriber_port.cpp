// The take hot path: round-robin over the queues of all matched publishers
// (none starves another, each keeps its order), a copy of the inline sample
// into a held buffer, no allocation, no lock, no system call unless we sleep.
#include <chrono>
#include <cstring>

#include "ferry/detail/ports.hpp"
#include "ferry/transport/doorbell.hpp"
#include "node_runtime.hpp"
#include "subscriber_queues.hpp"
#include "subscriber_state.hpp"
#include "wait_set_core.hpp"

namespace ferry::detail {

namespace {

using transport::RingError;

// A pooled slot: accept the reference the publisher's node gave us, and
// find the sample in the pool (zero copy). False: the slot is dropped.
bool accept_pooled(SubscriberState& state, const SubscriberQueueEnd& q, const std::byte* slot,
                   std::uint32_t length, std::uint32_t token, TakenSample& out) noexcept {
  const auto read = transport::read_pooled(std::span(slot, length), kSlotPooled);
  if (!read) return false;
  const PooledSlot pooled = *read;
  const auto ref = transport::ChunkRef::unpack(pooled.ref);
  auto& pool = state.pool->pool;
  pool.prefetch_payload(ref, false);  // the user reads it next: fetch it while accept's CAS waits
  if (!pool.accept(ref, state.pool->owner, q.peer_owner)) return false;  // counted by the pool
  auto payload = pool.resolve(ref);
  if (!payload || pooled.size > payload->size() || !plausible_size(state, pooled.size)) {
    (void)pool.release(ref, state.pool->owner);
    return false;
  }
  state.held().hold_chunk(token, pooled.ref);
  out.data = payload->data();
  out.size = static_cast<std::uint32_t>(pooled.size);
  return true;
}

// Pops the next sample, fairly (QueueSet::round), into `buffer` (inline) or
// the pool (pooled). False when every queue is empty.
bool pop_next(SubscriberState& state, std::byte* buffer, std::uint32_t token,
              TakenSample& out) noexcept {
  const std::span<std::byte> into(buffer, state.slot_bytes());
  transport::SlotMeta* meta = &state.held().info(token);  // where the Sample reads it
  return state.round([&](SubscriberQueueEnd& q) {
    std::uint32_t flags = 0;
    auto popped = q.consumer.try_pop(into, &flags, meta);
    while (!popped && popped.error() == RingError::CorruptSlot) {
      // A slot a broken publisher wrote badly was skipped and counted.
      popped = q.consumer.try_pop(into, &flags, meta);
    }
    if (!popped) return Visited::Empty;
    if (flags == kSlotPooled) {
      if (!accept_pooled(state, q, buffer, *popped, token, out)) return Visited::Skipped;
    } else {
      if (flags != kSlotInline || !plausible_size(state, *popped)) return Visited::Skipped;
      out.data = buffer;
      out.size = *popped;
    }
    out.token = token;
    return Visited::Done;
  });
}

}  // namespace

SubscriberPort::SubscriberPort(std::shared_ptr<NodeRuntime> runtime,
                               std::shared_ptr<SubscriberState> state)
    : runtime_(std::move(runtime)),
      state_(std::move(state)),
      held_(&state_->held()),
      lane_(state_->lane()) {}

SubscriberPort::~SubscriberPort() {
  // A WaitSet that waits on us lets go (and wakes) before our doorbell goes.
  if (wait_set) wait_set_port_gone(*this);
  runtime_->destroy_port(*state_);
}

// The lane popped a slot that is not an inline sample: a pooled one is
// accepted, anything else dropped (and the general path goes on).
TakeStatus SubscriberPort::take_popped(const LaneTaken& popped, TakenSample& out, ErrorCode& error,
                                       std::chrono::nanoseconds timeout) noexcept {
  SubscriberState& state = *state_;
  // The queue the lane popped from: still active, as the lane changes only
  // when this thread applies a change, and none was applied since.
  SubscriberQueueEnd& q = *state.lane_queue();
  if (popped.flags == kSlotPooled &&
      accept_pooled(state, q, popped.data, popped.size, popped.token, out)) {
    out.token = popped.token;
    return TakeStatus::Taken;
  }
  // A slot no plausible sample (bad flags, size or reference): dropped, as
  // the general path does; it goes on with the next.
  state.held().unacquire(popped.token);
  return take_general(out, error, timeout);
}

TakeStatus SubscriberPort::take_general(TakenSample& out, ErrorCode& error,
                                        std::chrono::nanoseconds timeout) noexcept {
  // A take(timeout) that found the lane empty spins on the lane first: the
  // same inlined poll a caller's own loop makes (one load of the queue's
  // tail), not the general walk below; a service's client and server wait
  // this way for every call. Anything but Empty leaves the lane.
  std::uint32_t spun = 0;
  if (timeout.count() > 0) {
    for (; spun < take_spin_; ++spun) {
      transport::cpu_relax();
      LaneTaken taken;
      const LaneResult result = lane_->try_take(taken);
      if (result == LaneResult::Taken) {
        out = TakenSample{taken.data, taken.size, taken.token};
        return TakeStatus::Taken;
      }
      if (result == LaneResult::Popped) return take_popped(taken, out, error, timeout);
      if (result == LaneResult::General) break;
    }
  }
  SubscriberState& state = *state_;
  QueueSet& queues = state.queues();  // one acquire load: also picks up a death sentence
  if (state.dead_seen) [[unlikely]] {
    error = state.dead_error();
    return TakeStatus::Failed;
  }
  if (timeout.count() <= 0) {
    // A poll, usually from a subscriber with one publisher: an empty one
    // costs one load of the queue's tail (none while its cached tail shows
    // a sample) and touches no held buffer; a sample is taken right here,
    // without the round-robin walk and the calls of pop_next.
    if (queues.size() == 1 && queues.front().state == QueueState::Live) [[likely]] {
      SubscriberQueueEnd& q = queues.front();
      if (!q.consumer.ready()) return TakeStatus::Empty;
      std::uint32_t token = 0;
      std::byte* buffer = nullptr;
      if (!state.held().acquire(token, buffer)) {
        error = ErrorCode::TooManyHeld;
        return TakeStatus::Failed;
      }
      std::uint32_t flags = 0;
      const auto popped = q.consumer.try_pop(std::span<std::byte>(buffer, state.slot_bytes()),
                                             &flags, &state.held().info(token));
      if (popped) {
        if (flags == kSlotInline && plausible_size(state, *popped)) [[likely]] {
          out.data = buffer;
          out.size = *popped;
          out.token = token;
          return TakeStatus::Taken;
        }
        if (flags == kSlotPooled && accept_pooled(state, q, buffer, *popped, token, out)) {
          out.token = token;
          return TakeStatus::Taken;
        }
      }
      state.held().unacquire(token);
      // A slot dropped (bad flags, size or reference) or skipped (corrupt),
      // or lost to the producer (overwrite mode): the general path below.
    } else if (!queues.any_ready()) {
      return TakeStatus::Empty;
    }
  }
  std::uint32_t token = 0;
  std::byte* buffer = nullptr;
  if (!state.held().acquire(token, buffer)) {
    error = ErrorCode::TooManyHeld;
    return TakeStatus::Failed;
  }
  bool got = pop_next(state, buffer, token, out);
  if (!got && timeout.count() > 0) {
    for (std::uint32_t spin = spun; spin < take_spin_ && !got; ++spin) {
      transport::cpu_relax();
      if (any_data(state)) got = pop_next(state, buffer, token, out);
    }
    if (!got) {
      // The clock is read only now that we are about to sleep.
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      while (!got) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) break;
        // One doorbell for all our queues: any publisher's push wakes us.
        transport::doorbell_wait(
            state.doorbell(), [&] { return any_data(state); }, left);
        got = pop_next(state, buffer, token, out);
        if (state.dead_seen) break;
      }
    }
  }
  if (!got) {
    state.held().unacquire(token);
    if (state.dead_seen) {
      error = state.dead_error();
      return TakeStatus::Failed;
    }
    return TakeStatus::Empty;
  }
  return TakeStatus::Taken;
}

// For a WaitSet (user's thread): applies what the runtime thread handed
// over; true while a sample is queued, the queues changed since the last call
// (a publisher came or went), or the node was declared dead (then try_take()
// says so). The port's wait_set and wait_index are written by that WaitSet
// under its mutex.
bool SubscriberPort::wait_ready() noexcept {
  SubscriberState& state = *state_;
  const std::uint32_t changes = state.changes_announced();
  const bool changed = changes != changes_seen_;
  changes_seen_ = changes;
  state.queues();  // applies what was handed over (and a death sentence)
  if (state.dead_seen) return true;
  return changed || any_data(state);
}

void SubscriberPort::forget_changes() noexcept { changes_seen_ = state_->changes_announced(); }

bool SubscriberPort::inherited() const noexcept { return runtime_->inherited(); }

transport::DoorbellWord& SubscriberPort::doorbell() noexcept { return state_->doorbell(); }

std::uint32_t SubscriberPort::publisher_count() const noexcept {
  // SYNC: relaxed; a count for the user.
  return state_->matched.load(std::memory_order_relaxed);
}

const std::string& SubscriberPort::topic() const noexcept { return state_->topic; }

std::size_t SubscriberPort::sample_size() const noexcept {
  return static_cast<std::size_t>(state_->config.sample_size);
}

}  // namespace ferry::detail
