#include "subscriber_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ferry/discovery/objects.hpp"
#include "log_gate.hpp"

namespace ferry::detail {

SubscriberState::SubscriberState(std::string domain_name, std::string topic_name,
                                 const discovery::PortCreated& created,
                                 std::shared_ptr<DomainPoolView> pool_view)
    : PortState(std::move(domain_name), std::move(topic_name), created, std::move(pool_view)) {
  bell_segment_.emplace(open_segment(created.doorbell_shm, discovery::kDoorbellKind,
                                     discovery::kDoorbellLayoutVersion, pool->daemon_owner));
  bell_ = doorbell_in(*bell_segment_);
  // A previous owner of this doorbell cannot exist (ferryd made it for us),
  // but a stale flag would only cost wake-ups: start clean.
  transport::doorbell_reset_sleeping(*bell_);
  const std::uint32_t held =
      std::clamp<std::uint32_t>(config.limits.max_held, 1, HeldSamples::kMaxBuffers);
  // Inline samples are copied into these buffers; pooled ones are read in
  // place (the buffer only receives the slot's reference).
  held_ = HeldSamples::create(held, inline_max, pool);
  scratch.resize(inline_max);
  rebuild_lane();
}

SubscriberState::~SubscriberState() {
  if (held_ != nullptr) held_->close();
  // A forked child's copy of its parent's port: its queues are the parent's
  // (and the pool view's lock may have been held at the fork).
  if (pool->is_inherited()) return;
  // Queues nobody will read again: a dead publisher's phantom references
  // can be settled once no queue from it is left. Each ring says so to its
  // publisher too: ferryd's Unmatched tells it as well, but a ferryd that
  // is down (or restarted since the ring was made) never will; the
  // publisher then stops waiting for room and retires the queue itself.
  for (const auto& q : active_) {
    q->consumer.leave();
    pool->queue_closed(q->peer_owner);
  }
  for (const auto& c : incoming_) {
    c->consumer.leave();
    pool->queue_closed(c->peer_owner);
  }
}

void SubscriberState::on_matched(const discovery::Matched& m) {
  std::unique_ptr<SubscriberQueueEnd> queue;
  try {
    auto ring = open_segment(m.ring_shm, discovery::kRingKind, transport::kRingLayoutVersion,
                             pool->daemon_owner);
    auto consumer = transport::RingConsumer::attach(ring.payload(), ring.payload_size(), bell_);
    if (!consumer) {
      throw std::runtime_error(
          fmt::format("ring '{}' refused: {}", m.ring_shm, transport::to_string(consumer.error())));
    }
    queue.reset(new SubscriberQueueEnd{m.peer_port_id, m.peer_owner, std::move(ring),
                                       std::move(*consumer)});
    queue->peer_identity = m.peer_identity;
    queue->match_order = ++matched_so_far_;
  } catch (const std::exception& e) {
    log_line(spdlog::level::err, "subscriber on '{}': cannot reach publisher '{}' (pid {}): {}",
             topic, m.peer_node, m.peer_pid, e.what());
    return;
  }
  log_line(spdlog::level::debug, "subscriber on '{}' matched publisher '{}' (pid {})", topic,
           m.peer_node, m.peer_pid);
  pool->queue_opened(m.peer_owner);
  peer_owners_[m.peer_port_id] = PeerOf{m.peer_owner, queue->peer_identity};
  const bool replaces = replaces_old_queue(*queue);
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(queue));
  }
  // SYNC: relaxed; a count for the user, not a hand-over.
  if (!replaces) matched.fetch_add(1, std::memory_order_relaxed);
  announce_change();
  // Wake a take() that sleeps: the new queue may already hold samples.
  transport::doorbell_notify(*bell_);
}

void SubscriberState::on_unmatched(const discovery::Unmatched& u) {
  auto owner = peer_owners_.find(u.peer_port_id);
  if (owner == peer_owners_.end()) return;  // a queue we never mapped
  if (u.reason != discovery::UnmatchReason::PortDestroyed) pool->peer_died(owner->second.owner);
  peer_owners_.erase(owner);
  {
    std::lock_guard lock(mutex_);
    leaving_.push_back(u.peer_port_id);
  }
  // SYNC: relaxed; a count for the user, not a hand-over.
  matched.fetch_sub(1, std::memory_order_relaxed);
  announce_change();
  transport::doorbell_notify(*bell_);
}

void SubscriberState::apply_changes() {
  if (pool->is_inherited()) [[unlikely]] {
    // A forked child's copy of its parent's port, as in PublisherState::
    // apply_changes: no lock, and the queues (the parent's to read) are
    // only unmapped here.
    active_.clear([](SubscriberQueueEnd&) {});
    drop_for_good();
    rebuild_lane();
    return;
  }
  std::lock_guard lock(mutex_);
  mark_changes_seen();
  if (session_over()) {
    // ferryd reclaimed what was queued to us: nothing there is ours now.
    active_.clear([this](SubscriberQueueEnd& q) { pool->queue_closed(q.peer_owner); });
    for (const auto& q : incoming_) pool->queue_closed(q->peer_owner);
    incoming_.clear();
    leaving_.clear();
    drop_for_good();
    rebuild_lane();
    return;
  }
  for (auto& q : incoming_) active_.add(std::move(q));
  incoming_.clear();
  apply_aging();
  // What a departed publisher published before it left is still delivered:
  // its queue is only Closed, and dropped once drained.
  for (std::uint64_t peer : leaving_) active_.close(peer);
  leaving_.clear();
  rebuild_lane();
}

void SubscriberState::drop_drained() noexcept {
  active_.drop_drained([this](const SubscriberQueueEnd& q) {
    pool->queue_closed(q.peer_owner);  // may settle a dead publisher's phantoms
    // The previous ferryd's ring: its new daemon does not know the name.
    if (from_previous_daemon(q.state)) {
      transport::Segment::remove(q.queue_segment.name());
      std::lock_guard lock(mutex_);
      // No allocation: age_queues() reserved room for every old queue.
      if (finished_old_.size() < finished_old_.capacity()) finished_old_.push_back(q.peer);
    }
  });
  rebuild_lane();
}

void SubscriberState::rebuild_lane() noexcept {
  lane_.guard = &guard_;
  lane_.held = held_;
  lane_.slot_bytes = inline_max;
  lane_.min_size = 0;
  lane_.max_size = 0;
  lane_.consumer = nullptr;
  lane_queue_ = nullptr;
  if (active_.size() != 1 || dead_seen) return;
  // Any topic: a sample that is not a plausible inline one (a pool
  // reference, a bytes sample longer than a slot sent by reference) comes
  // back Popped and is accepted out of line; the poll stays inline
  // (docs/design/hot-path.md).
  if (config.sample_size != 0) {
    lane_.min_size = lane_.max_size = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(config.sample_size, std::uint64_t{UINT32_MAX}));
  } else {
    lane_.max_size =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(config.max_size, inline_max));
  }
  // Only a Live queue: a Closed one is dropped once drained, an Old one
  // once finished (QueueSet::round), which the lane does not look for.
  SubscriberQueueEnd* q = active_.lone_live();
  if (q == nullptr) return;
  lane_.consumer = &q->consumer;
  lane_queue_ = q;
}

}  // namespace ferry::detail
