// The client's half of a service (docs/services.md): calls numbered by the
// request publisher's sequence, responses routed to their call by it.
#include <algorithm>
#include <thread>

#include "ferry/detail/service_core.hpp"

namespace ferry::detail {

namespace {
// How long a waiting call sleeps at most before it looks whether its
// server is still there (a server that dies before it first answered this
// client has no queue to us whose end would wake us).
constexpr std::chrono::milliseconds kServerCheck{20};
}  // namespace

ClientCore::ClientCore(std::string service, std::unique_ptr<PublisherPort> requests,
                       std::unique_ptr<SubscriberPort> responses, std::uint32_t capacity)
    : service_(std::move(service)),
      requests_(std::move(requests)),
      responses_(std::move(responses)),
      slots_(std::max<std::uint32_t>(capacity, 1)) {}

ClientCore::~ClientCore() {
  for (Slot& s : slots_) finish(s);
}

bool ClientCore::wait_for_server(std::chrono::nanoseconds timeout) const noexcept {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!has_server()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

std::expected<ClientCore::Sent, ErrorCode> ClientCore::send(const void* data,
                                                            std::uint32_t size) noexcept {
  if (pending_ >= slots_.size()) return std::unexpected(ErrorCode::TooManyPending);
  if (!has_server()) return std::unexpected(ErrorCode::NoServer);
  std::uint32_t index = 0;
  while (slots_[index].state != SlotState::Free) ++index;  // pending_ < size: one is free
  const std::uint64_t sequence = requests_->next_sequence();
  const PublishResult result = requests_->publish(data, size);
  if (result.delivered == 0) {
    if (result.error) return std::unexpected(*result.error);
    return std::unexpected(has_server() ? ErrorCode::TooManyPending : ErrorCode::NoServer);
  }
  Slot& slot = slots_[index];
  slot.state = SlotState::Waiting;
  slot.sequence = sequence;
  ++slot.generation;
  ++pending_;
  return Sent{index, slot.generation, sequence};
}

void ClientCore::finish(Slot& slot) noexcept {
  if (slot.state == SlotState::Free) return;
  if (slot.state == SlotState::Arrived) release_held(held(), slot.taken.token);
  slot.state = SlotState::Free;
  --pending_;
}

void ClientCore::abandon(const Sent& sent) noexcept {
  if (current(sent)) finish(slots_[sent.slot]);
}

void ClientCore::drain() noexcept {
  TakenSample taken;
  ErrorCode error{};
  while (responses_->take(taken, error, std::chrono::nanoseconds::zero()) == TakeStatus::Taken)
    route(taken);
}

void ClientCore::route(const TakenSample& taken) noexcept {
  const std::uint64_t tagged = held()->info(taken.token).sequence;
  const std::uint64_t sequence = tagged & ~kNoResponseBit;
  for (Slot& s : slots_) {
    if (s.state != SlotState::Waiting || s.sequence != sequence) continue;
    if ((tagged & kNoResponseBit) != 0) {
      release_held(held(), taken.token);
      s.state = SlotState::Failed;
      s.error = ErrorCode::NoResponse;
    } else {
      s.state = SlotState::Arrived;
      s.taken = taken;
    }
    return;
  }
  release_held(held(), taken.token);  // its call ended: late
  ++late_;
}

void ClientCore::fail_waiting(ErrorCode error) noexcept {
  for (Slot& s : slots_) {
    if (s.state != SlotState::Waiting) continue;
    s.state = SlotState::Failed;
    s.error = error;
  }
}

ClientCore::Outcome ClientCore::take(const Sent& sent, std::chrono::nanoseconds timeout,
                                     TakenSample& out, ErrorCode& error) noexcept {
  if (!current(sent)) {
    error = ErrorCode::PortClosed;  // taken already, or abandoned
    return Outcome::Failed;
  }
  Slot& slot = slots_[sent.slot];
  std::chrono::steady_clock::time_point deadline{};
  bool deadline_set = false;
  for (;;) {
    if (slot.state == SlotState::Arrived) {
      out = slot.taken;
      slot.state = SlotState::Free;  // the sample is the caller's now
      --pending_;
      return Outcome::Taken;
    }
    if (slot.state == SlotState::Failed) {
      error = slot.error;
      finish(slot);
      return Outcome::Failed;
    }
    std::chrono::nanoseconds wait = std::chrono::nanoseconds::zero();
    if (timeout.count() > 0) {
      const auto now = std::chrono::steady_clock::now();
      if (!deadline_set) {
        deadline = now + timeout;
        deadline_set = true;
      }
      wait = std::min<std::chrono::nanoseconds>(
          std::max(deadline - now, decltype(deadline - now){}), kServerCheck);
    }
    TakenSample taken;
    ErrorCode take_error{};
    switch (responses_->take(taken, take_error, wait)) {
      case TakeStatus::Taken:
        route(taken);
        continue;
      case TakeStatus::Failed:
        error = take_error;
        // The caller holds max_held responses: it may release one and take
        // again, the call goes on.
        if (take_error == ErrorCode::TooManyHeld) return Outcome::Failed;
        finish(slot);
        return Outcome::Failed;
      case TakeStatus::Empty:
        break;
    }
    if (!has_server()) {
      fail_waiting(ErrorCode::ServerGone);
      continue;
    }
    if (timeout.count() <= 0) return Outcome::Empty;
    if (std::chrono::steady_clock::now() >= deadline) {
      error = ErrorCode::Timeout;
      finish(slot);  // its answer, if it comes, is late
      return Outcome::Failed;
    }
  }
}

}  // namespace ferry::detail
