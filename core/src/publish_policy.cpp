// The full-queue policy engine (publish_policy.hpp). A pooled sample's
// reference is given to each subscriber's node before the push makes it
// visible (docs/design/pool.md) and taken back when the push fails or
// drop_oldest discards it; inline samples own nothing outside their slot.
#include "publish_policy.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>

#include "publisher_state.hpp"

namespace ferry::detail {

namespace {

using discovery::Policy;
using transport::ChunkRef;
using transport::RingError;

// block, several queues full: how long we sleep on one before trying the next.
constexpr std::chrono::nanoseconds kBlockSlice = std::chrono::milliseconds(1);

std::uint32_t as_count(std::size_t n) noexcept {
  return static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
}

class Delivery {
 public:
  Delivery(PublisherState& state, const Outgoing& out, PublishResult& result,
           bool hand_over) noexcept
      : state_(state), out_(out), result_(result), hand_over_(hand_over) {}

  // drop_new: the first samples that fit, the rest refused.
  void drop_new(PublisherQueueEnd& c) noexcept {
    if (!give(c)) return;
    const std::size_t n = stage(c, out_);
    result_.delivered += as_count(n);
    if (n == out_.count) return;
    if (n == 0) take_back(c);
    refuse(c, out_.count - n);
  }

  // drop_oldest (and observers): the newest `capacity` stay; a discarded
  // older sample of ours that was pooled gives its reference back.
  void drop_oldest(PublisherQueueEnd& c) noexcept {
    if (!give(c)) return;
    auto overwritten = c.producer.try_push_overwrite_many(
        out_.data, out_.count, out_.size, out_.flags, out_.info,
        [&](std::span<const std::byte> payload, std::uint32_t flags) {
          discarded(c, payload, flags);
        });
    if (!overwritten) {
      take_back(c);
      refuse(c, out_.count);
      return;
    }
    result_.delivered += as_count(out_.count);
    result_.overwritten += as_count(*overwritten);
  }

  // block: every queue takes what fits; then, against one deadline
  // (block_timeout_ms from the first full queue), whatever has room is
  // refilled and, when none has, we sleep on a full queue's space doorbell
  // (see below). What a queue still lacks at the deadline is its timed_out.
  // The clock is read only when some queue is full.
  void block(std::span<std::unique_ptr<PublisherQueueEnd>> queues) noexcept {
    auto& waiting = state_.full_queues();  // room for every queue, reserved off the hot path
    waiting.clear();
    for (auto& c : queues) {
      c->batch_done = 0;
      if (!give(*c)) continue;
      (void)refill(*c);
      if (c->batch_done < out_.count) waiting.push_back(c.get());
    }
    if (waiting.empty()) return;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(state_.config.block_timeout_ms);
    auto drop_at = [&](std::size_t i) {
      waiting[i] = waiting.back();
      waiting.pop_back();
    };
    std::size_t waits = 0;
    while (!waiting.empty()) {
      bool moved = false;
      for (std::size_t i = 0; i < waiting.size();) {
        moved = refill(*waiting[i]) || moved;
        if (waiting[i]->batch_done == out_.count) {
          drop_at(i);
        } else {
          ++i;
        }
      }
      if (waiting.empty() || moved) continue;
      // Each ring has its own space doorbell: with one queue waiting we
      // sleep until it has room (or the deadline); with several, on each in
      // turn for at most kBlockSlice, so that one stalled subscriber does
      // not keep a live one from the rest of the batch.
      const std::size_t turn = waits++ % waiting.size();
      PublisherQueueEnd& c = *waiting[turn];
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
      if (waiting.size() > 1) left = std::min<std::chrono::nanoseconds>(left, kBlockSlice);
      auto room = c.producer.wait_room(left, &c.abandoned);
      if (room || room.error() == RingError::Timeout) continue;
      // Its subscriber is gone (Abandoned) or the queue is broken: the rest
      // is refused there.
      if (c.batch_done == 0) take_back(c);
      refuse(c, out_.count - c.batch_done);
      drop_at(turn);
    }
    for (PublisherQueueEnd* c : waiting) {
      if (c->batch_done == 0) take_back(*c);
      const std::size_t rest = out_.count - c->batch_done;
      c->producer.count_timed_out(rest);
      result_.timed_out += as_count(rest);
    }
  }

 private:
  // Writes what fits of `out` into free slots and sends it with one tail
  // store (and at most one doorbell notification).
  static std::size_t stage(PublisherQueueEnd& c, const Outgoing& out) noexcept {
    const std::size_t n = c.producer.stage_many(out.data, out.count, out.size, out.flags, out.info);
    c.producer.publish();
    return n;
  }
  // Stages what fits of the part c has not taken yet. True when anything went.
  bool refill(PublisherQueueEnd& c) noexcept {
    const std::size_t n = stage(c, out_.from(c.batch_done));
    if (n == 0) return false;
    c.batch_done += n;
    result_.delivered += as_count(n);
    return true;
  }
  // Pooled: gives the subscriber's node its reference before the push
  // makes the sample visible. False: the queue is skipped (refused).
  bool give(PublisherQueueEnd& c) noexcept {
    if (out_.flags != kSlotPooled) return true;
    auto& pool = state_.pool->pool;
    if (hand_over_ && !*out_.handed &&
        pool.transfer(out_.chunk, state_.pool->owner, c.peer_owner)) {
      *out_.handed = true;
      return true;
    }
    if (pool.give(out_.chunk, state_.pool->owner, c.peer_owner)) return true;
    refuse(c, out_.count);
    return false;
  }
  // Pooled: the push failed for good, the subscriber will never see the
  // reference we gave it.
  void take_back(PublisherQueueEnd& c) noexcept {
    if (out_.flags != kSlotPooled) return;
    (void)state_.pool->pool.revoke(out_.chunk, state_.pool->owner, c.peer_owner);
  }
  void refuse(PublisherQueueEnd& c, std::size_t n) noexcept {
    c.producer.count_dropped(n);
    result_.dropped += as_count(n);
  }
  // drop_oldest discarded an older sample of ours from c's queue.
  void discarded(PublisherQueueEnd& c, std::span<const std::byte> payload,
                 std::uint32_t flags) noexcept {
    if (const auto pooled = transport::read_pooled(payload, flags); pooled && pooled->ref != 0) {
      (void)state_.pool->pool.revoke(ChunkRef::unpack(pooled->ref), state_.pool->owner,
                                     c.peer_owner);
    }
  }

  PublisherState& state_;
  const Outgoing& out_;
  PublishResult& result_;
  const bool hand_over_;  // decided once the queues are read: exactly one
};

}  // namespace

PublishResult deliver(PublisherState& state, const Outgoing& out) noexcept {
  PublishResult result;
  auto& ends = state.queue_ends();  // one acquire load: applies changes
  if (state.dead_seen) [[unlikely]] {
    result.error = state.dead_error();
    return result;
  }
  const bool hand_over = out.handed != nullptr && ends.size() == 1;
  const std::span<std::unique_ptr<PublisherQueueEnd>> all(ends);
  const auto subscribers = all.first(state.subscriber_queues());
  Delivery delivery(state, out, result, hand_over);
  switch (state.config.policy) {
    case Policy::DropNew:
      for (auto& c : subscribers) delivery.drop_new(*c);
      break;
    case Policy::DropOldest:
      for (auto& c : subscribers) delivery.drop_oldest(*c);
      break;
    case Policy::Block:
      delivery.block(subscribers);
      break;
  }
  // Observers last: their queues overwrite, so nobody waits for them, and
  // what they missed is counted in their queues, not in the result.
  PublishResult unseen;
  Delivery observe(state, out, unseen, hand_over);
  for (auto& c : all.subspan(subscribers.size())) observe.drop_oldest(*c);
  // History keeps every inline sample, in order (a pooled one's reference
  // is the caller's to pass on; a no-op without `history:`).
  if (out.flags == kSlotInline && state.keeps_history()) {
    for (std::size_t k = 0; k < out.count; ++k) {
      transport::SlotMeta info = out.info;
      info.sequence += k;
      (void)state.remember(std::span(out.data + k * out.size, out.size), kSlotInline, info);
    }
  }
  return result;
}

void add_result(PublishResult& into, const PublishResult& r) noexcept {
  into.delivered += r.delivered;
  into.dropped += r.dropped;
  into.overwritten += r.overwritten;
  into.timed_out += r.timed_out;
  if (r.error) into.error = r.error;
}

}  // namespace ferry::detail
