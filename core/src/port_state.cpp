#include "port_state.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "ferry/discovery/objects.hpp"

namespace ferry::detail {

namespace {

transport::Segment open_segment(const std::string& name, transport::SegmentKind kind,
                                std::uint32_t version) {
  auto segment = transport::Segment::open(name, kind, version, discovery::kOpenTimeout);
  if (!segment) {
    throw std::runtime_error(
        fmt::format("cannot open shared-memory object '{}': {}", name, to_string(segment.error())));
  }
  return std::move(*segment);
}

transport::DoorbellWord* doorbell_in(transport::Segment& segment) {
  if (segment.payload_size() < sizeof(transport::DoorbellWord)) {
    throw std::runtime_error(fmt::format("doorbell object '{}' is too small", segment.name()));
  }
  return reinterpret_cast<transport::DoorbellWord*>(segment.payload());
}

template <class Connection>
void remove_peer(std::vector<std::unique_ptr<Connection>>& list, std::uint64_t peer) {
  std::erase_if(list, [peer](const auto& c) { return c->peer == peer; });
}

}  // namespace

namespace {
constexpr std::uint32_t kSlotHeader = 8;  // {length, flags} before a slot's payload
}

PortState::PortState(std::string domain_name, std::string topic_name,
                     const discovery::PortCreated& created, std::shared_ptr<DomainPoolView> pool_view)
    : domain(std::move(domain_name)),
      topic(std::move(topic_name)),
      port_id(created.port_id),
      config(created.topic),
      pool(std::move(pool_view)),
      inline_max(created.topic.slot_size > kSlotHeader ? created.topic.slot_size - kSlotHeader : 0) {
  if (inline_max < sizeof(PooledSlot)) {
    throw std::runtime_error(fmt::format("topic '{}' has ring slots of {} bytes, too small to carry "
                                         "a pool reference",
                                         topic, created.topic.slot_size));
  }
}

// ---- publisher ---------------------------------------------------------------

void PublisherState::on_matched(const discovery::Matched& m) {
  std::unique_ptr<PublisherConnection> connection;
  try {
    auto ring = open_segment(m.ring_shm, discovery::kRingKind,
                             transport::kRingLayoutVersion);
    auto bell = open_segment(m.doorbell_shm, discovery::kDoorbellKind,
                             discovery::kDoorbellLayoutVersion);
    auto producer =
        transport::RingProducer::attach(ring.payload(), ring.payload_size(), doorbell_in(bell));
    if (!producer) {
      throw std::runtime_error(fmt::format("ring '{}' refused: {}", m.ring_shm,
                                           transport::to_string(producer.error())));
    }
    connection.reset(new PublisherConnection{m.peer_port_id, m.peer_owner, std::move(ring),
                                             std::move(bell), std::move(*producer)});
  } catch (const std::exception& e) {
    spdlog::error("publisher on '{}': cannot reach subscriber '{}' (pid {}): {}", topic,
                  m.peer_node, m.peer_pid, e.what());
    return;
  }
  spdlog::debug("publisher on '{}' matched subscriber '{}' (pid {})", topic, m.peer_node, m.peer_pid);
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(connection));
  }
  // SYNC: relaxed; a count for the user, not a hand-over.
  matched.fetch_add(1, std::memory_order_relaxed);
  announce_change();
}

void PublisherState::on_unmatched(const discovery::Unmatched& u) {
  {
    std::lock_guard lock(mutex_);
    leaving_.push_back(u.peer_port_id);
  }
  // SYNC: relaxed; a count for the user, not a hand-over.
  matched.fetch_sub(1, std::memory_order_relaxed);
  announce_change();
}

void PublisherState::apply_changes() {
  std::lock_guard lock(mutex_);
  mark_changes_seen();
  for (auto& c : incoming_) active_.push_back(std::move(c));
  incoming_.clear();
  for (std::uint64_t peer : leaving_) remove_peer(active_, peer);
  leaving_.clear();
  full_.reserve(active_.size());
}

// ---- subscriber --------------------------------------------------------------

SubscriberState::SubscriberState(std::string domain_name, std::string topic_name,
                                 const discovery::PortCreated& created,
                                 std::shared_ptr<DomainPoolView> pool_view)
    : PortState(std::move(domain_name), std::move(topic_name), created, std::move(pool_view)) {
  bell_segment_.emplace(open_segment(created.doorbell_shm, discovery::kDoorbellKind,
                                     discovery::kDoorbellLayoutVersion));
  bell_ = doorbell_in(*bell_segment_);
  // A previous owner of this doorbell cannot exist (ferryd made it for us),
  // but a stale flag would only cost wake-ups: start clean.
  transport::doorbell_reset_sleeping(*bell_);
  const std::uint32_t held = std::clamp<std::uint32_t>(config.limits.max_held, 1,
                                                       HeldSamples::kMaxBuffers);
  // Inline samples are copied into these buffers; pooled ones are read in
  // place (the buffer only receives the slot's reference).
  held_ = HeldSamples::create(held, inline_max, pool);
}

SubscriberState::~SubscriberState() {
  if (held_ != nullptr) held_->close();
}

void SubscriberState::on_matched(const discovery::Matched& m) {
  std::unique_ptr<SubscriberConnection> connection;
  try {
    auto ring = open_segment(m.ring_shm, discovery::kRingKind,
                             transport::kRingLayoutVersion);
    auto consumer = transport::RingConsumer::attach(ring.payload(), ring.payload_size(), bell_);
    if (!consumer) {
      throw std::runtime_error(fmt::format("ring '{}' refused: {}", m.ring_shm,
                                           transport::to_string(consumer.error())));
    }
    connection.reset(new SubscriberConnection{m.peer_port_id, m.peer_owner, std::move(ring),
                                              std::move(*consumer), false});
  } catch (const std::exception& e) {
    spdlog::error("subscriber on '{}': cannot reach publisher '{}' (pid {}): {}", topic,
                  m.peer_node, m.peer_pid, e.what());
    return;
  }
  spdlog::debug("subscriber on '{}' matched publisher '{}' (pid {})", topic, m.peer_node, m.peer_pid);
  {
    std::lock_guard lock(mutex_);
    incoming_.push_back(std::move(connection));
  }
  // SYNC: relaxed; a count for the user, not a hand-over.
  matched.fetch_add(1, std::memory_order_relaxed);
  announce_change();
  // Wake a take() that sleeps: the new queue may already hold samples.
  transport::doorbell_notify(*bell_);
}

void SubscriberState::on_unmatched(const discovery::Unmatched& u) {
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
  std::lock_guard lock(mutex_);
  mark_changes_seen();
  for (auto& c : incoming_) active_.push_back(std::move(c));
  incoming_.clear();
  // What a departed publisher published before it left is still delivered:
  // its queue is only retired, and dropped once drained.
  for (std::uint64_t peer : leaving_) {
    for (auto& c : active_) {
      if (c->peer == peer) c->retired = true;
    }
  }
  leaving_.clear();
}

void SubscriberState::drop_drained() noexcept {
  std::erase_if(active_, [](const auto& c) { return c->retired && !c->consumer.has_data(); });
}

}  // namespace ferry::detail
