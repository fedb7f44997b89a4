#pragma once
// A publisher port's shared state and its queues (PublisherQueueEnd). State machines, ownership
// and locks of the port family: port_state.hpp.

#include "port_state.hpp"

namespace ferry::detail {

// PublisherQueueEnd::history_next of a queue that gets no history.
inline constexpr std::uint64_t kNoHistory = std::numeric_limits<std::uint64_t>::max();

struct PublisherQueueEnd {
  std::uint64_t peer = 0;
  transport::NodeSlot peer_owner = 0;  // the subscriber's node, receiver of pool references
  transport::Segment queue_segment;
  transport::Segment bell_segment;  // the subscriber's doorbell
  transport::RingProducer producer;
  // The first history entry not handed to this queue yet (its producer's
  // thread: the runtime thread until the queue is applied, then the user's);
  // kNoHistory for a queue that replaces an old one after a ferryd restart.
  std::uint64_t history_next = 0;
  // The subscriber is an observer: its queue overwrites (whatever the
  // topic's policy), and its outcome is not the publisher's result.
  bool observer = false;
  // Raised by the runtime thread when the subscriber is gone, to end a
  // block-policy push() waiting for room in its queue.
  std::atomic<bool> abandoned{false};
  // publish_many (user's thread): samples of the current batch this queue took.
  std::size_t batch_done = 0;
  // Who hands this queue the topic's history first (history_handoff.hpp).
  HistoryClaim history{};
};

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
  std::vector<std::unique_ptr<PublisherQueueEnd>>& queue_ends() noexcept {
    // One acquire load for queue changes, one relaxed load of our node's
    // heartbeat state; both are read-mostly lines.
    if (!guard_.clear() && !dead_seen) apply_changes();
    return active_;
  }
  // User's thread: how many of queue_ends(), from the front, are real
  // subscribers' queues; observers' queues come after them.
  [[nodiscard]] std::size_t subscriber_queues() const noexcept { return subscriber_queues_; }
  // User's thread: scratch list for the block policy, with room for every
  // active queue (reserved when queues change, not on the hot path).
  std::vector<PublisherQueueEnd*>& full_queues() noexcept { return full_; }
  [[nodiscard]] const PublishLane* lane() const noexcept { return &lane_; }

 private:
  void apply_changes();
  void age_queues() override;
  struct Leaving;
  // Runtime thread, in on_matched: when the new queue replaces previous
  // daemons' queues to the subscriber port `peer_identity`, their leavings
  // (handed over with the new queue, under one lock; the peer was counted
  // already); empty for a new peer.
  std::vector<Leaving> replaced_queues(std::uint64_t peer_identity);
  // User's thread, after applying changes: the shortcut, if it applies.
  void rebuild_lane() noexcept;
  // Pushes the history entries c has not had yet, oldest first, as far as
  // its queue has room. Called by whichever thread is c's producer.
  void hand_history(PublisherQueueEnd& c) noexcept;

  // Takes back the pool references still queued to a subscriber port that
  // was destroyed (its node lives on and will never read them).
  void take_back_queued(PublisherQueueEnd& c) noexcept;

  struct Leaving {
    std::uint64_t peer = 0;
    bool port_destroyed = false;  // the subscriber's node lives: we empty its queue
    bool close_ring = false;      // replaced after a daemon restart: tell the reader it ended
    // The subscriber's node is dead (0: it is not): once this queue is
    // dropped, what we gave it since ferryd reclaimed it is revoked.
    transport::NodeSlot dead_owner = 0;
  };
  // Runtime thread: a previous-daemon queue is done (replaced, or its peer
  // `owner` is gone: then a push waiting on it gives up); its leaving, for
  // the caller to hand over.
  Leaving old_queue_leaving(std::uint64_t peer, transport::NodeSlot owner, bool peer_gone);
  // Runtime thread: whether the reader of a handed queue left its ring
  // (RingConsumer::leave), and that queue's leaving (its ring name removed).
  [[nodiscard]] bool handed_reader_left(std::uint64_t peer) const noexcept;
  Leaving reader_left_leaving(std::uint64_t peer);
  // The exact re-reclaim of a dead subscriber (see apply_changes).
  void revoke_given_to_dead(transport::NodeSlot dead_owner) noexcept;
  OldPeers old_peers_;                      // runtime thread: previous-daemon queues
  std::set<std::uint64_t> observer_peers_;  // runtime thread: matched observers' ports
  // Releases a push() blocked on c's queue (runtime thread).
  static void abandon(PublisherQueueEnd& c) noexcept;

  History history_;
  // Runtime thread: the queues handed over and not yet announced leaving.
  // They stay alive until the user's thread applies their leaving, which
  // this thread announces only after it is done with them.
  std::map<std::uint64_t, PublisherQueueEnd*> handed_;
  std::vector<std::unique_ptr<PublisherQueueEnd>> incoming_;  // under mutex_
  std::vector<Leaving> leaving_;                              // under mutex_
  std::vector<std::unique_ptr<PublisherQueueEnd>> active_;    // user's thread
  std::size_t subscriber_queues_ = 0;  // user's thread: active_'s real subscribers, first
  std::vector<std::unique_ptr<PublisherQueueEnd>> graveyard_;  // under mutex_: kept until we go
  std::vector<PublisherQueueEnd*> full_;                       // user's thread
  PublishLane lane_;                                           // user's thread
};

}  // namespace ferry::detail
