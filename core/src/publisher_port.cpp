// The publish hot path: one copy into each matched queue, the topic's
// full-queue policy, no allocation, no lock, no system call unless a
// subscriber sleeps (its doorbell) or we must wait (block policy).
#include <chrono>
#include <span>

#include "ferry/detail/ports.hpp"
#include "node_runtime.hpp"
#include "port_state.hpp"

namespace ferry::detail {

namespace {

using discovery::Policy;
using transport::RingError;

// A queue that refuses a sample for a reason other than being full (its
// indices were corrupted by a broken peer) counts as a refusal, never a crash.
void push_drop_new(PublisherConnection& c, std::span<const std::byte> msg, PublishResult& r) noexcept {
  if (c.producer.try_push(msg)) {
    ++r.delivered;
    return;
  }
  c.producer.count_dropped();
  ++r.dropped;
}

void push_drop_oldest(PublisherConnection& c, std::span<const std::byte> msg,
                      PublishResult& r) noexcept {
  // Inline samples own nothing outside their slot: nothing to release.
  auto pushed = c.producer.try_push_overwrite(msg, 0, [](std::span<const std::byte>, std::uint32_t) {});
  if (!pushed) {
    c.producer.count_dropped();
    ++r.dropped;
    return;
  }
  ++r.delivered;
  if (*pushed == transport::PushOutcome::Overwrote) ++r.overwritten;
}

void publish_blocking(PublisherState& state, std::span<const std::byte> msg,
                      PublishResult& result) noexcept {
  auto& connections = state.connections();
  // First every queue with room, so that a full one does not delay the
  // others; then wait for the full ones against one shared deadline. The
  // clock is read only when some queue is full.
  auto& full = state.full_queues();
  full.clear();
  for (auto& c : connections) {
    if (c->producer.try_push(msg)) {
      ++result.delivered;
    } else {
      full.push_back(c.get());  // capacity reserved when the queue was added
    }
  }
  if (full.empty()) return;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(state.config.block_timeout_ms);
  for (PublisherConnection* c : full) {
    const auto left = std::max(deadline - std::chrono::steady_clock::now(),
                               std::chrono::steady_clock::duration::zero());
    // push() spins, then sleeps on the queue's space doorbell; a Timeout is
    // counted in the queue's timed_out counter by the ring itself.
    auto pushed = c->producer.push(msg, 0, left);
    if (pushed) {
      ++result.delivered;
    } else if (pushed.error() == RingError::Timeout) {
      ++result.timed_out;
    } else {
      c->producer.count_dropped();
      ++result.dropped;
    }
  }
}

}  // namespace

PublisherPort::PublisherPort(std::shared_ptr<NodeRuntime> runtime,
                             std::shared_ptr<PublisherState> state)
    : runtime_(std::move(runtime)), state_(std::move(state)) {}

PublisherPort::~PublisherPort() { runtime_->destroy_port(state_->port_id); }

PublishResult PublisherPort::publish(const void* data, std::uint32_t size) noexcept {
  PublishResult result;
  const std::span<const std::byte> msg(static_cast<const std::byte*>(data), size);
  auto& connections = state_->connections();
  switch (state_->config.policy) {
    case Policy::drop_new:
      for (auto& c : connections) push_drop_new(*c, msg, result);
      break;
    case Policy::drop_oldest:
      for (auto& c : connections) push_drop_oldest(*c, msg, result);
      break;
    case Policy::block:
      publish_blocking(*state_, msg, result);
      break;
  }
  return result;
}

std::uint32_t PublisherPort::subscriber_count() const noexcept {
  // SYNC: relaxed; a count for the user.
  return state_->matched.load(std::memory_order_relaxed);
}

const std::string& PublisherPort::topic() const noexcept { return state_->topic; }

std::size_t PublisherPort::sample_size() const noexcept {
  return static_cast<std::size_t>(state_->config.sample_size);
}

}  // namespace ferry::detail
