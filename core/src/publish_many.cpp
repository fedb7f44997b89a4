// publish_many (docs/batches.md): a batch of samples of one size through the
// topic's policy, per sample, with one tail store and at most one doorbell
// wake-up per queue and batch (per refill while a block queue drains).
// Inline samples only: a sample larger than a slot travels through the
// pool one by one (its own chunk each; no batched loan, see docs/batches.md).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>

#include "ferry/detail/ports.hpp"
#include "node_runtime.hpp"
#include "publisher_state.hpp"

namespace ferry::detail {

namespace {

using discovery::Policy;
using transport::RingError;

// `count` inline samples of `size` bytes, back to back; `info` is the
// first one's (sequence + k for the k-th, the rest shared by the batch).
struct Batch {
  const std::byte* data = nullptr;
  std::size_t count = 0;
  std::uint32_t size = 0;
  transport::SlotMeta info{};

  [[nodiscard]] Batch from(std::size_t k) const noexcept {
    Batch rest = *this;
    rest.data += k * size;
    rest.count -= k;
    rest.info.sequence += k;
    return rest;
  }
};

// block, several queues full: how long we sleep on one before trying the next.
constexpr std::chrono::nanoseconds kBlockSlice = std::chrono::milliseconds(1);

std::uint32_t as_count(std::size_t n) noexcept {
  return static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
}

void add(PublishResult& into, const PublishResult& r) noexcept {
  into.delivered += r.delivered;
  into.dropped += r.dropped;
  into.overwritten += r.overwritten;
  into.timed_out += r.timed_out;
  if (r.error) into.error = r.error;
}

// drop_new: the first samples that fit, the rest refused.
void drop_new(PublisherConnection& c, const Batch& b, PublishResult& r) noexcept {
  const std::size_t n = c.producer.stage_many(b.data, b.count, b.size, kSlotInline, b.info);
  c.producer.publish();
  r.delivered += as_count(n);
  if (n == b.count) return;
  c.producer.count_dropped(b.count - n);
  r.dropped += as_count(b.count - n);
}

// drop_oldest (and observers): the newest `capacity` stay. A discarded
// older sample of ours that was pooled (a loan published before) gives
// its reference back.
void drop_oldest(PublisherState& state, PublisherConnection& c, const Batch& b,
                 PublishResult& r) noexcept {
  auto overwritten = c.producer.try_push_overwrite_many(
      b.data, b.count, b.size, kSlotInline, b.info,
      [&](std::span<const std::byte> payload, std::uint32_t flags) {
        if (flags != kSlotPooled || payload.size() < sizeof(std::uint64_t)) return;
        std::uint64_t ref = 0;
        std::memcpy(&ref, payload.data(), sizeof ref);
        if (ref != 0) {
          (void)state.pool->pool.revoke(transport::ChunkRef::unpack(ref), state.pool->owner,
                                        c.peer_owner);
        }
      });
  if (!overwritten) {
    c.producer.count_dropped(b.count);
    r.dropped += as_count(b.count);
    return;
  }
  r.delivered += as_count(b.count);
  r.overwritten += as_count(*overwritten);
}

// Stages what fits of the part of `b` that c has not taken yet, and sends
// it with one tail store. True when anything went.
bool refill(PublisherConnection& c, const Batch& b, PublishResult& r) noexcept {
  const Batch rest = b.from(c.batch_done);
  const std::size_t n =
      c.producer.stage_many(rest.data, rest.count, rest.size, kSlotInline, rest.info);
  if (n == 0) return false;
  c.producer.publish();
  c.batch_done += n;
  r.delivered += as_count(n);
  return true;
}

// block: every queue takes what fits; then, against one deadline
// (block_timeout_ms from the first full queue), whatever has room is
// refilled and, when none has, we sleep on a full queue's space doorbell
// (see below). What a queue still lacks at the deadline is its timed_out.
void block(PublisherState& state, std::span<std::unique_ptr<PublisherConnection>> queues,
           const Batch& b, PublishResult& r) noexcept {
  auto& waiting = state.full_queues();  // room for every queue, reserved off the hot path
  waiting.clear();
  for (auto& c : queues) {
    c->batch_done = 0;
    (void)refill(*c, b, r);
    if (c->batch_done < b.count) waiting.push_back(c.get());
  }
  if (waiting.empty()) return;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(state.config.block_timeout_ms);
  auto drop_at = [&](std::size_t i) {
    waiting[i] = waiting.back();
    waiting.pop_back();
  };
  std::size_t waits = 0;
  while (!waiting.empty()) {
    bool moved = false;
    for (std::size_t i = 0; i < waiting.size();) {
      moved = refill(*waiting[i], b, r) || moved;
      if (waiting[i]->batch_done == b.count) {
        drop_at(i);
      } else {
        ++i;
      }
    }
    if (waiting.empty() || moved) continue;
    // Each ring has its own space doorbell: with one queue waiting we sleep
    // until it has room (or the deadline); with several, on each in turn
    // for at most kBlockSlice, so that one stalled subscriber does not keep
    // a live one from the rest of the batch.
    const std::size_t turn = waits++ % waiting.size();
    PublisherConnection& c = *waiting[turn];
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
    if (waiting.size() > 1) left = std::min<std::chrono::nanoseconds>(left, kBlockSlice);
    auto room = c.producer.wait_room(left, &c.abandoned);
    if (room || room.error() == RingError::Timeout) continue;
    // Its subscriber is gone (Abandoned) or the queue is broken: the rest
    // of the batch is refused there.
    const std::size_t rest = b.count - c.batch_done;
    c.producer.count_dropped(rest);
    r.dropped += as_count(rest);
    drop_at(turn);
  }
  for (PublisherConnection* c : waiting) {
    const std::size_t rest = b.count - c->batch_done;
    c->producer.count_timed_out(rest);
    r.timed_out += as_count(rest);
  }
}

// Every queue of the port, by the topic's policy; observers last (their
// queues overwrite and their outcome is not the publisher's).
void deliver_batch(PublisherState& state, const Batch& b, PublishResult& r) noexcept {
  auto& connections = state.connections();  // one acquire load: applies changes
  if (state.dead_seen) [[unlikely]] {
    r.error = state.dead_error();
    return;
  }
  const std::span<std::unique_ptr<PublisherConnection>> all(connections);
  const auto subscribers = all.first(state.subscriber_queues());
  switch (state.config.policy) {
    case Policy::drop_new:
      for (auto& c : subscribers) drop_new(*c, b, r);
      break;
    case Policy::drop_oldest:
      for (auto& c : subscribers) drop_oldest(state, *c, b, r);
      break;
    case Policy::block:
      block(state, subscribers, b, r);
      break;
  }
  PublishResult unseen;
  for (auto& c : all.subspan(subscribers.size())) drop_oldest(state, *c, b, unseen);
  // History keeps every sample, in order, as publish() does (a no-op
  // without `history:`).
  if (!state.keeps_history()) return;
  for (std::size_t k = 0; k < b.count; ++k) {
    transport::SlotMeta info = b.info;
    info.sequence += k;
    (void)state.remember(std::span(b.data + k * b.size, b.size), kSlotInline, info);
  }
}

}  // namespace

PublishResult PublisherPort::publish_many(const void* data, std::size_t count,
                                          std::uint32_t size) noexcept {
  PublishResult result;
  if (count == 0) return result;
  const auto* bytes = static_cast<const std::byte*>(data);
  if (size > state_->inline_max) {
    // Pooled samples: each needs its own chunk anyway; one by one.
    for (std::size_t k = 0; k < count; ++k) add(result, publish(bytes + k * size, size));
    return result;
  }
  Batch batch{bytes, count, size,
              transport::SlotMeta{next_sequence_, publisher_id_, publish_time_ns()}};
  next_sequence_ += count;
  // The lane (one queue, inline, no drop_oldest, no history): what fits
  // goes with one tail store; the rest, if any, by the policy below.
  if (lane_->producer != nullptr && lane_->guard->clear()) [[likely]] {
    const std::size_t n = lane_->producer->stage_many(bytes, count, size, kSlotInline, batch.info);
    lane_->producer->publish();
    result.delivered = as_count(n);
    if (n == count) return result;
    batch = batch.from(n);
  }
  deliver_batch(*state_, batch, result);
  return result;
}

}  // namespace ferry::detail
