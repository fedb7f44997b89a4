#pragma once
// A subscriber port's shared state and its queues (SubscriberConnection). State machines, ownership
// and locks of the port family: port_state.hpp.

#include "port_state.hpp"

namespace ferry::detail {

struct SubscriberConnection {
  std::uint64_t peer = 0;
  transport::OwnerId peer_owner = 0;  // the publisher's node, giver of pool references
  transport::Segment ring_segment;
  transport::RingConsumer consumer;
  bool retired = false;  // the publisher is gone: drop the queue once drained
  // Set up by a previous ferryd: done (and its ring's name removed) once the
  // publisher closed it and it is drained.
  bool old_epoch = false;
  // The publisher port's identity (PeerOf::identity).
  std::uint64_t peer_identity = 0;
  // Queues of this port in the order they were matched (1, 2, ...).
  std::uint64_t match_order = 0;
  // Replaces previous-daemon queues of the publisher port with identity
  // `waits_for` (0: none): read only once every queue of that publisher
  // matched before this one is gone, so the publisher's order holds.
  std::uint64_t waits_for = 0;
};

class SubscriberState final : public PortState {
 public:
  SubscriberState(std::string domain, std::string topic, const discovery::PortCreated& created,
                  std::shared_ptr<DomainPoolView> pool);
  ~SubscriberState() override;
  void on_matched(const discovery::Matched& matched) override;
  void on_unmatched(const discovery::Unmatched& unmatched) override;
  void check_old_peers(const std::function<bool(transport::OwnerId)>& alive) override;
  [[nodiscard]] std::string resume_doorbell() const override { return bell_segment_->name(); }
  void mark_dead() noexcept override {
    PortState::mark_dead();
    transport::doorbell_notify(*bell_);  // a take() asleep returns the error now
  }

  // User's thread.
  std::vector<std::unique_ptr<SubscriberConnection>>& connections() noexcept {
    // One acquire load for queue changes, one relaxed load of our node's
    // heartbeat state; both are read-mostly lines.
    if (!guard_.clear() && !dead_seen) apply_changes();
    return active_;
  }
  // User's thread: forgets retired queues that are empty.
  void drop_drained() noexcept;

  [[nodiscard]] transport::DoorbellWord& doorbell() noexcept { return *bell_; }
  [[nodiscard]] HeldSamples& held() noexcept { return *held_; }
  // Bytes a ring slot's payload can hold: the receive buffer's size.
  [[nodiscard]] std::uint32_t slot_bytes() const noexcept { return inline_max; }
  std::size_t next_ring = 0;  // round-robin start, user's thread
  // take_many's landing place for an overwriting queue's slot (its length
  // is checked only once copied out): slot_bytes(), made with the state.
  std::vector<std::byte> scratch;
  [[nodiscard]] const TakeLane* lane() const noexcept { return &lane_; }
  // User's thread: the queue behind the lane (null while it has none).
  [[nodiscard]] SubscriberConnection* lane_queue() const noexcept { return lane_queue_; }

 private:
  void apply_changes();
  void age_queues() override;
  // Serving thread, in on_matched: whether the new queue replaces a previous
  // daemon's (then it waits for those of the same publisher to be drained).
  bool replaces_old_queue(SubscriberConnection& added);
  std::uint64_t matched_so_far_ = 0;  // serving thread: SubscriberConnection::match_order
  // User's thread, in apply_changes: the queues begin_epoch() aged are Old.
  void apply_aging() noexcept;
  // User's thread, whenever active_ changed: the shortcut, if it applies.
  void rebuild_lane() noexcept;

  std::optional<transport::Segment> bell_segment_;
  transport::DoorbellWord* bell_ = nullptr;
  HeldSamples* held_ = nullptr;  // closed (not deleted) with the state: samples may outlive it

  std::vector<std::unique_ptr<SubscriberConnection>> incoming_;  // under mutex_
  std::vector<std::uint64_t> leaving_;                           // under mutex_
  std::vector<std::uint64_t> aging_;  // under mutex_: peers whose queues are now old_epoch
  // Under mutex_: peers whose old queue the user's thread dropped, finished
  // (its publisher closed it: replaced, or its port destroyed); the serving
  // thread forgets them (check_old_peers). Reserved by age_queues().
  std::vector<std::uint64_t> finished_old_;
  OldPeers old_peers_;  // serving thread: previous-daemon queues
  std::vector<std::unique_ptr<SubscriberConnection>> active_;  // user's thread
  TakeLane lane_;                                              // user's thread
  SubscriberConnection* lane_queue_ = nullptr;                 // user's thread: lane_'s
};

}  // namespace ferry::detail
