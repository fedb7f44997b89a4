#pragma once
// A publisher port's shared state; its queues are in publisher_queue_set.hpp. State machines,
// ownership and locks of the port family: port_state.hpp.

#include "port_state.hpp"
#include "publisher_queue_set.hpp"

namespace ferry::detail {

class PublisherState final : public PortState {
 public:
  PublisherState(std::string domain, std::string topic, const discovery::PortCreated& created,
                 std::shared_ptr<DomainPoolView> pool);
  ~PublisherState() override;
  // The port id ferryd first gave us, kept when the port re-registers with
  // a restarted ferryd: the samples' publisher_id (ids are never reused in
  // a domain).
  const std::uint64_t publisher_id;
  void on_matched(const discovery::Matched& matched) override;
  void on_unmatched(const discovery::Unmatched& unmatched) override;
  void mark_dead() noexcept override;
  void check_old_peers(const std::function<bool(transport::NodeSlot)>& alive) override;

  // User's thread, after each publish: keeps the sample's slot bytes for
  // late joiners (a pooled sample's reference passes to the history).
  // Returns false when the topic has no history (the caller keeps the
  // reference).
  bool remember(std::span<const std::byte> slot_bytes, std::uint32_t flags,
                const transport::SlotMeta& meta) noexcept;
  [[nodiscard]] bool keeps_history() const noexcept { return history_.enabled(); }

  // User's thread: the matched queues, current.
  PublisherQueueSet::Queues& queue_ends() noexcept {
    // One acquire load for queue changes, one relaxed load of our node's
    // heartbeat state; both are read-mostly lines.
    if (!guard_.clear() && !dead_seen) apply_changes();
    return queues_.active();
  }
  // User's thread: how many of queue_ends(), from the front, are real
  // subscribers' queues; observers' queues come after them.
  [[nodiscard]] std::size_t subscriber_queues() const noexcept {
    return queues_.subscriber_queues();
  }
  // User's thread: scratch list for the block policy, with room for every
  // active queue (reserved when queues change, not on the hot path).
  std::vector<PublisherQueueEnd*>& full_queues() noexcept { return full_; }
  [[nodiscard]] const PublishLane* lane() const noexcept { return &lane_; }
  // User's thread: the queue behind the lane (null while it has none).
  [[nodiscard]] PublisherQueueEnd* lane_queue() const noexcept { return lane_queue_; }

 private:
  void apply_changes();
  void age_queues() override;
  // Runtime thread, in on_matched: when the new queue replaces previous
  // daemons' queues to the subscriber port `peer_identity`, their leavings
  // (handed over with the new queue, under one lock; the peer was counted
  // already); empty for a new peer.
  std::vector<QueueLeaving> replaced_queues(std::uint64_t peer_identity);
  // User's thread, after applying changes: the shortcut, if it applies.
  void rebuild_lane() noexcept;
  // Pushes the history entries c has not had yet, oldest first, as far as
  // its queue has room. Called by whichever thread is c's producer.
  void hand_history(PublisherQueueEnd& c) noexcept;

  // Takes back the pool references still queued to a subscriber port that
  // was destroyed (its node lives on and will never read them).
  void take_back_queued(PublisherQueueEnd& c) noexcept;

  // Runtime thread: a previous-daemon queue is done (replaced, or its peer
  // `owner` is gone: then a push waiting on it gives up); its leaving, for
  // the caller to hand over.
  QueueLeaving old_queue_leaving(std::uint64_t peer, transport::NodeSlot owner, bool peer_gone);
  // Runtime thread: whether the reader of a handed queue left its ring
  // (RingConsumer::leave), and that queue's leaving (its ring name removed).
  [[nodiscard]] bool handed_reader_left(std::uint64_t peer) const noexcept;
  QueueLeaving reader_left_leaving(std::uint64_t peer);
  // The exact re-reclaim of a dead subscriber (see PublisherQueueSet::apply).
  void revoke_given_to_dead(transport::NodeSlot dead_owner) noexcept;
  OldPeers old_peers_;                      // runtime thread: previous-daemon queues
  std::set<std::uint64_t> observer_peers_;  // runtime thread: matched observers' ports

  History history_;
  // The queues: handed over, applied, leaving (the runtime thread's and the
  // user's, publisher_queue_set.hpp).
  PublisherQueueSet queues_;
  std::vector<PublisherQueueEnd*> full_;     // user's thread
  PublishLane lane_;                         // user's thread
  PublisherQueueEnd* lane_queue_ = nullptr;  // user's thread: lane_'s
};

}  // namespace ferry::detail
