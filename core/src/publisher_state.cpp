#include "publisher_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ferry/discovery/objects.hpp"
#include "log_gate.hpp"

namespace ferry::detail {

PublisherState::PublisherState(std::string domain_name, std::string topic_name,
                               const discovery::PortCreated& created,
                               std::shared_ptr<DomainPoolView> pool_view)
    : PortState(std::move(domain_name), std::move(topic_name), created, std::move(pool_view)),
      publisher_id(created.port_id),
      history_(created.topic.limits.history, inline_max) {
  rebuild_lane();
}

PublisherState::~PublisherState() {
  // A forked child's copy of its parent's port: the history's chunks and
  // the leavings are the parent's, and mutex_ may have been held at the fork.
  if (pool->is_inherited()) return;
  // Nobody else uses the history now: the chunks it kept go back.
  history_.for_each_pooled([this](std::uint64_t ref) {
    (void)pool->pool.release(transport::ChunkRef::unpack(ref), pool->owner);
  });
  // Dead subscribers whose leaving the user's thread never applied: what
  // this port gave them after their reclaim goes; nothing more comes from
  // us, so every queue is closed.
  std::lock_guard lock(mutex_);
  queues_.close_all(lock, [this](transport::NodeSlot dead) { revoke_given_to_dead(dead); });
}

void PublisherState::revoke_given_to_dead(transport::NodeSlot dead_owner) noexcept {
  if (const std::uint64_t n = pool->pool.revoke_given(pool->owner, dead_owner); n > 0) {
    log_line(spdlog::level::debug,
             "publisher on '{}': revoked {} reference(s) given to the dead node (owner {}) "
             "after ferryd reclaimed it",
             topic, n, dead_owner);
  }
}

bool PublisherState::remember(std::span<const std::byte> slot_bytes, std::uint32_t flags,
                              const transport::SlotMeta& meta) noexcept {
  if (!history_.enabled()) return false;
  if (const std::uint64_t evicted = history_.record(slot_bytes, flags, meta); evicted != 0) {
    (void)pool->pool.release(transport::ChunkRef::unpack(evicted), pool->owner);
  }
  return true;
}

void PublisherState::hand_history(PublisherQueueEnd& c) noexcept {
  if (!history_.enabled()) return;
  const std::uint64_t recorded = history_.recorded();
  const std::uint64_t kept = std::min<std::uint64_t>(recorded, history_.depth());
  const std::uint64_t from = std::max(c.history_next, recorded - kept);
  if (from >= recorded) return;
  // The entries [from, recorded) are collected first and pushed only as one
  // unbroken run: an entry the publisher overwrote meanwhile (it lapped the
  // runtime thread), or whose chunk is gone, ends everything before it, so
  // the subscriber never sees a gap between history and live samples. Not
  // the hot path: it runs when a queue is matched.
  struct Item {
    std::uint32_t length = 0;
    std::uint32_t flags = 0;
    transport::ChunkRef chunk{};
    transport::SlotMeta meta{};  // the original publish's: a late subscriber sees it unchanged
  };
  std::vector<Item> items;
  items.reserve(static_cast<std::size_t>(recorded - from));
  std::vector<std::byte> buffer(static_cast<std::size_t>(recorded - from) * inline_max);
  auto slot_of = [&](std::size_t k) {
    return std::span<std::byte>(buffer.data() + k * inline_max, inline_max);
  };
  auto drop_collected = [&] {
    for (const Item& item : items) {
      if (item.flags == kSlotPooled) (void)pool->pool.revoke(item.chunk, pool->owner, c.peer_owner);
    }
    items.clear();
  };
  for (std::uint64_t seq = from; seq < recorded; ++seq) {
    Item item;
    const auto slot = slot_of(items.size());
    if (!history_.read(seq, slot, item.length, item.flags, item.meta)) {
      drop_collected();  // overwritten: the run restarts after it
      continue;
    }
    if (item.flags == kSlotPooled) {
      const auto pooled = transport::read_pooled(
          slot.first(std::min<std::size_t>(item.length, slot.size())), item.flags);
      if (!pooled) {
        drop_collected();
        continue;
      }
      item.chunk = transport::ChunkRef::unpack(pooled->ref);
      // The history holds the chunk (or held it a moment ago: then the
      // chunk's generation moved on and the give is refused).
      if (!pool->pool.give(item.chunk, pool->owner, c.peer_owner)) {
        drop_collected();
        continue;
      }
    }
    items.push_back(item);
  }
  std::size_t pushed = 0;
  for (; pushed < items.size(); ++pushed) {
    const Item& item = items[pushed];
    if (!c.producer.try_push(slot_of(pushed).first(item.length), item.flags, item.meta)) break;
  }
  // A queue too full for the rest (history as large as the capacity, and
  // more published meanwhile): those are not handed out.
  for (std::size_t k = pushed; k < items.size(); ++k) {
    if (items[k].flags == kSlotPooled) {
      (void)pool->pool.revoke(items[k].chunk, pool->owner, c.peer_owner);
    }
  }
  c.history_next = recorded;
}

void PublisherState::on_matched(const discovery::Matched& m) {
  std::unique_ptr<PublisherQueueEnd> end;
  try {
    auto ring = open_segment(m.ring_shm, discovery::kRingKind, transport::kRingLayoutVersion,
                             pool->daemon_owner);
    auto bell = open_segment(m.doorbell_shm, discovery::kDoorbellKind,
                             discovery::kDoorbellLayoutVersion, pool->daemon_owner);
    auto producer =
        transport::RingProducer::attach(ring.payload(), ring.payload_size(), doorbell_in(bell));
    if (!producer) {
      throw std::runtime_error(
          fmt::format("ring '{}' refused: {}", m.ring_shm, transport::to_string(producer.error())));
    }
    end.reset(new PublisherQueueEnd{m.peer_port_id, m.peer_owner, std::move(ring), std::move(bell),
                                    std::move(*producer), 0, m.peer_observer});
  } catch (const std::exception& e) {
    log_line(spdlog::level::err, "publisher on '{}': cannot reach subscriber '{}' (pid {}): {}",
             topic, m.peer_node, m.peer_pid, e.what());
    return;
  }
  log_line(spdlog::level::debug, "publisher on '{}' matched {} '{}' (pid {})", topic,
           m.peer_observer ? "observer" : "subscriber", m.peer_node, m.peer_pid);
  PublisherQueueEnd* const added = end.get();
  const std::uint64_t subscriber = m.peer_identity;
  peer_owners_[m.peer_port_id] = PeerOf{m.peer_owner, subscriber};
  if (m.peer_observer) observer_peers_.insert(m.peer_port_id);
  // After a ferryd restart the new queue may replace the subscriber's old
  // one. The switch is one step of the user's thread: the new queue and the
  // old one's closing are handed over under one lock, so that apply_changes
  // sees both or neither. (Handed over apart, a publish() between the two
  // wrote both queues: the subscriber, which reads the new queue only once
  // the old one is closed and drained, got those samples twice.) The
  // replacement gets no history (it is Replacing, publisher_queue_state.hpp):
  // the old queue had it, and every sample published since.
  const std::vector<QueueLeaving> replaced = replaced_queues(subscriber);
  const bool replaces = !replaced.empty();
  if (replaces) added->state = PublisherQueueState::Replacing;  // its first state
  {
    std::lock_guard lock(mutex_);
    queues_.hand_over(lock, std::move(end), replaced);
  }
  announce_change();
  if (!replaces) {
    // Observers are not the publisher's subscribers: counted apart.
    // SYNC: release, pairs with the acquire load in PublisherPort::
    // subscriber_count()/observer_count(): counted after the change is
    // announced, so a thread that sees the new count and then publishes
    // finds the change (LaneGuard's acquire) and delivers to the queue.
    (m.peer_observer ? observers : matched).fetch_add(1, std::memory_order_release);
  }
  if (history_.enabled() && !replaces) {
    // A late joiner gets the history now, even if we never publish again.
    // Claimed first, so that a publish() that picks the queue up meanwhile
    // waits for us (apply_changes) instead of writing the queue alongside,
    // and then adds what it published since.
    if (added->history.claim_for_serving()) {
      hand_history(*added);
      added->history.finish_serving();
    }
  }
}

void PublisherState::on_unmatched(const discovery::Unmatched& u) {
  const auto owner = peer_owners_.find(u.peer_port_id);
  if (owner == peer_owners_.end()) return;  // a queue we never mapped
  const bool peer_dead = u.reason != discovery::UnmatchReason::PortDestroyed;
  const transport::NodeSlot dead_owner = peer_dead ? owner->second.owner : transport::NodeSlot{0};
  peer_owners_.erase(owner);
  // SYNC: relaxed; a count for the user, not a hand-over. Counted down
  // first, so that a publish() released below already sees the new count.
  (observer_peers_.erase(u.peer_port_id) != 0 ? observers : matched)
      .fetch_sub(1, std::memory_order_relaxed);
  (void)queues_.abandon(u.peer_port_id);  // before its leaving lets the user's thread free it
  {
    std::lock_guard lock(mutex_);
    queues_.announce_leaving(
        lock, QueueLeaving{u.peer_port_id,
                           peer_dead ? Departure::PeerDied : Departure::PortDestroyed, dead_owner});
  }
  announce_change();
}

void PublisherState::mark_dead() noexcept {
  queues_.abandon_all();
  PortState::mark_dead();
}

void PublisherState::apply_changes() {
  if (pool->is_inherited()) [[unlikely]] {
    // A forked child's copy of its parent's port (fork_guard.hpp): its
    // queues are set aside, untouched, with no lock (PublisherQueueSet::
    // bury_inherited).
    queues_.bury_inherited();
    drop_for_good();
    rebuild_lane();
    return;
  }
  std::lock_guard lock(mutex_);
  mark_changes_seen();
  const auto revoke = [this](transport::NodeSlot dead) { revoke_given_to_dead(dead); };
  if (session_over()) {
    // ferryd reclaimed our node: its queues are not ours to write any more.
    queues_.bury(lock, revoke);
    drop_for_good();
    rebuild_lane();
    return;
  }
  queues_.apply(
      lock,
      [this](PublisherQueueEnd& c) {
        if (!history_.enabled()) return;
        c.history.claim_for_user();  // waits while the runtime thread hands it (a few pushes)
        // All of it, or what was published since the runtime thread's part;
        // a Replacing queue gets none.
        if (c.state == PublisherQueueState::Incoming) hand_history(c);
      },
      [this](PublisherQueueEnd& c) { take_back_queued(c); }, revoke);
  full_.reserve(queues_.active().size());
  rebuild_lane();
}

void PublisherState::rebuild_lane() noexcept {
  // One queue, samples that can travel inline, and nothing a push alone
  // would not do: drop_oldest may discard (a CAS, counted), history records
  // each sample. A bytes topic's sample (sample_size 0) takes the lane when
  // it fits a slot; a longer one is refused by the push (TooLarge, nothing
  // written) and goes the general way, into the pool.
  auto& active = queues_.active();
  const bool applies = active.size() == 1 && queues_.subscriber_queues() == 1 && !dead_seen &&
                       config.sample_size <= inline_max &&
                       config.policy != discovery::Policy::DropOldest && !history_.enabled();
  lane_.guard = &guard_;
  lane_queue_ = applies ? active.front().get() : nullptr;
  lane_.producer = applies ? &lane_queue_->producer : nullptr;
}

void PublisherState::take_back_queued(PublisherQueueEnd& c) noexcept {
  // ferryd unmatches a destroyed port only after its DestroyPort, so its
  // consumer is gone: we may read the ring as its one consumer now. (A dead
  // subscriber node is reclaimed whole by ferryd instead.)
  auto consumer =
      transport::RingConsumer::attach(c.queue_segment.payload(), c.queue_segment.payload_size());
  if (!consumer) return;
  std::vector<std::byte> slot(inline_max);  // a departure, not the hot path
  for (std::uint32_t left = consumer->capacity(); left > 0; --left) {
    std::uint32_t flags = 0;
    auto popped = consumer->try_pop(slot, &flags);
    if (!popped) {
      if (popped.error() != transport::RingError::CorruptSlot) break;  // empty, or unreadable
      continue;                                                        // a bad slot was skipped
    }
    const auto pooled = transport::read_pooled(std::span(slot).first(*popped), flags);
    if (!pooled) continue;
    (void)pool->pool.revoke(transport::ChunkRef::unpack(pooled->ref), pool->owner, c.peer_owner);
  }
}

}  // namespace ferry::detail
