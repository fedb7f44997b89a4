// take_many (docs/batches.md): copies up to N samples out of the queues, fairly
// (round-robin, as take()), each queue's run with one head store and at
// most one wake-up of its publisher. It holds nothing: pooled samples are
// copied out of their chunk and the chunk released at once, so max_held
// does not limit it. SampleInfo is not returned (the caller asked for Ts).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>

#include "ferry/detail/ports.hpp"
#include "ferry/transport/doorbell.hpp"
#include "node_runtime.hpp"
#include "subscriber_queues.hpp"
#include "subscriber_state.hpp"

namespace ferry::detail {

namespace {

using transport::RingError;
using transport::RingMode;

// Where the samples go: `max` of `size` bytes; `got` so far.
struct Out {
  std::byte* data = nullptr;
  std::size_t max = 0;
  std::uint32_t size = 0;
  std::size_t got = 0;
  [[nodiscard]] std::byte* next() const noexcept { return data + got * size; }
  [[nodiscard]] std::size_t room() const noexcept { return max - got; }
};

// A pooled slot (a loan published on this topic): accept the reference,
// copy the sample out of the chunk, let the chunk go. False: dropped.
bool copy_pooled(SubscriberState& state, const SubscriberQueueEnd& q,
                 std::span<const std::byte> slot, std::byte* to, std::uint32_t size) noexcept {
  const auto read = transport::read_pooled(slot, kSlotPooled);
  if (!read) return false;
  const PooledSlot pooled = *read;
  const auto ref = transport::ChunkRef::unpack(pooled.ref);
  auto& pool = state.pool->pool;
  if (!pool.accept(ref, state.pool->owner, q.peer_owner)) return false;  // counted by the pool
  const auto payload = pool.resolve(ref);
  const bool ok = payload && pooled.size == size && pooled.size <= payload->size();
  if (ok) std::memcpy(to, payload->data(), size);
  (void)pool.release(ref, state.pool->owner);
  return ok;
}

// One slot's bytes into `out`, when they are a plausible sample.
void keep(SubscriberState& state, const SubscriberQueueEnd& q, std::span<const std::byte> slot,
          std::uint32_t flags, Out& out) noexcept {
  if (flags == kSlotInline) {
    if (slot.size() != out.size) return;  // a broken peer's: dropped, as take() does
    std::memcpy(out.next(), slot.data(), out.size);
    ++out.got;
  } else if (flags == kSlotPooled && copy_pooled(state, q, slot, out.next(), out.size)) {
    ++out.got;
  }
}

// Takes what q has, up to out.room(). True when q was empty.
bool take_from(SubscriberState& state, SubscriberQueueEnd& q, Out& out) noexcept {
  const std::size_t before = out.got;
  if (q.consumer.mode() == RingMode::Spsc) {
    while (out.room() > 0) {
      const auto room = static_cast<std::uint32_t>(std::min<std::size_t>(out.room(), UINT32_MAX));
      auto freed =
          q.consumer.consume_many(room, [&](std::span<const std::byte> slot, std::uint32_t flags) {
            keep(state, q, slot, flags, out);
          });
      if (!freed || *freed == 0) break;
    }
  } else {
    // Overwrite mode: each slot is claimed by its own CAS (the producer may
    // discard it under us), so one by one.
    const std::span<std::byte> scratch(state.scratch);
    while (out.room() > 0) {
      std::uint32_t flags = 0;
      auto popped = q.consumer.try_pop(scratch, &flags);
      if (!popped) {
        if (popped.error() == RingError::CorruptSlot) continue;  // skipped and counted
        break;
      }
      keep(state, q, scratch.first(*popped), flags, out);
    }
  }
  return out.got == before;
}

// One round over the queues (QueueSet::round) until `out` is full; the
// next call starts after the last queue that gave something.
void take_round(SubscriberState& state, Out& out) noexcept {
  (void)state.round([&](SubscriberQueueEnd& q) {
    if (take_from(state, q, out)) return Visited::Empty;
    return out.room() > 0 ? Visited::Took : Visited::Done;
  });
}

}  // namespace

// Copies up to `max` samples of `size` bytes (the topic's sample size) into
// `out`, fairly from the queues as take() does, each queue's run with one
// head store; waits up to `timeout` for the first one only. Returns how many
// it copied (0: none came), or why it could not take: NodeDeclaredDead,
// InheritedNode, InvalidArgument (`size` is not the topic's sample size).
std::expected<std::size_t, ErrorCode> SubscriberPort::take_many(
    void* out_data, std::size_t max, std::uint32_t size,
    std::chrono::nanoseconds timeout) noexcept {
  SubscriberState& state = *state_;
  Out out{static_cast<std::byte*>(out_data), max, size, 0};
  if (size != state.config.sample_size) [[unlikely]]
    return std::unexpected(ErrorCode::InvalidArgument);
  state.queues();  // one acquire load: applies changes, sees a death sentence
  if (state.dead_seen) [[unlikely]]
    return std::unexpected(state.dead_error());
  if (max == 0) return 0;
  take_round(state, out);
  if (out.got > 0 || timeout.count() <= 0) return out.got;
  for (std::uint32_t spin = 0; spin < take_spin_ && out.got == 0; ++spin) {
    transport::cpu_relax();
    if (any_data(state)) take_round(state, out);
  }
  if (out.got > 0) return out.got;
  // The clock is read only now that we are about to sleep.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.got == 0 && !state.dead_seen) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    // One doorbell for all our queues: any publisher's push wakes us.
    transport::doorbell_wait(
        state.doorbell(), [&] { return any_data(state); }, left);
    take_round(state, out);
  }
  if (out.got == 0 && state.dead_seen) return std::unexpected(state.dead_error());
  return out.got;
}

}  // namespace ferry::detail
