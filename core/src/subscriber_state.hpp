#pragma once
// A subscriber port's shared state and its queues (QueueSet, queue_set.hpp).
// State machines, ownership and locks of the port family: port_state.hpp;
// a queue's own states: queue_state.hpp.

#include "port_state.hpp"
#include "queue_set.hpp"

namespace ferry::detail {

class SubscriberState final : public PortState {
 public:
  SubscriberState(std::string domain, std::string topic, const discovery::PortCreated& created,
                  std::shared_ptr<DomainPoolView> pool);
  ~SubscriberState() override;
  void on_matched(const discovery::Matched& matched) override;
  void on_unmatched(const discovery::Unmatched& unmatched) override;
  void check_old_peers(const std::function<bool(transport::NodeSlot)>& alive) override;
  [[nodiscard]] std::string resume_doorbell() const override { return bell_segment_->name(); }
  void mark_dead() noexcept override {
    PortState::mark_dead();
    transport::doorbell_notify(*bell_);  // a take() asleep returns the error now
  }

  // User's thread: the queues, current.
  QueueSet& queues() noexcept {
    // One acquire load for queue changes, one relaxed load of our node's
    // heartbeat state; both are read-mostly lines.
    if (!guard_.clear() && !dead_seen) apply_changes();
    return active_;
  }
  // User's thread: one round over the current queues (QueueSet::round),
  // then the Closed queues found empty are dropped. True when a visit said
  // Visited::Done.
  template <class Visit>
  bool round(Visit&& visit) noexcept {
    const QueueSet::RoundEnd end = queues().round(visit);
    if (end.drained) [[unlikely]]
      drop_drained();
    return end.done;
  }

  [[nodiscard]] transport::DoorbellWord& doorbell() noexcept { return *bell_; }
  [[nodiscard]] HeldSamples& held() noexcept { return *held_; }
  // Bytes a ring slot's payload can hold: the receive buffer's size.
  [[nodiscard]] std::uint32_t slot_bytes() const noexcept { return inline_max; }
  // take_many's landing place for an overwriting queue's slot (its length
  // is checked only once copied out): slot_bytes(), made with the state.
  std::vector<std::byte> scratch;
  [[nodiscard]] const TakeLane* lane() const noexcept { return &lane_; }
  // User's thread: the queue behind the lane (null while it has none).
  [[nodiscard]] SubscriberQueueEnd* lane_queue() const noexcept { return lane_queue_; }

 private:
  void apply_changes();
  // User's thread: drops the Closed queues that are empty.
  void drop_drained() noexcept;
  void age_queues() override;
  // Runtime thread, in on_matched: whether the new queue replaces a previous
  // daemon's (then it waits for those of the same publisher to be drained).
  bool replaces_old_queue(SubscriberQueueEnd& added);
  std::uint64_t matched_so_far_ = 0;  // runtime thread: SubscriberQueueEnd::match_order
  // User's thread, in apply_changes: the queues mark_queues_old() aged are Old.
  void apply_aging() noexcept;
  // User's thread, whenever active_ changed: the shortcut, if it applies.
  void rebuild_lane() noexcept;

  std::optional<transport::Segment> bell_segment_;
  transport::DoorbellWord* bell_ = nullptr;
  HeldSamples* held_ = nullptr;  // closed (not deleted) with the state: samples may outlive it

  std::vector<std::unique_ptr<SubscriberQueueEnd>> incoming_;  // under mutex_
  std::vector<std::uint64_t> leaving_;                         // under mutex_
  std::vector<std::uint64_t> aging_;  // under mutex_: peers whose queues are now Old
  // Under mutex_: peers whose old queue the user's thread dropped, finished
  // (its publisher closed it: replaced, or its port destroyed); the runtime
  // thread forgets them (check_old_peers). Reserved by age_queues().
  std::vector<std::uint64_t> finished_old_;
  OldPeers old_peers_;                        // runtime thread: previous-daemon queues
  QueueSet active_;                           // user's thread
  TakeLane lane_;                             // user's thread
  SubscriberQueueEnd* lane_queue_ = nullptr;  // user's thread: lane_'s
};

}  // namespace ferry::detail
