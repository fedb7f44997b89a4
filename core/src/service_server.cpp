// The server's half of a service (docs/services.md): requests from the
// request topic, responses to each client's response topic with the call's
// sequence.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <thread>

#include "ferry/detail/service_core.hpp"
#include "log_gate.hpp"

namespace ferry::detail {

ServerCore::ServerCore(std::string service, std::unique_ptr<SubscriberPort> requests,
                       ResponderFactory make_responder, std::chrono::milliseconds match_timeout)
    : service_(std::move(service)),
      requests_(std::move(requests)),
      make_responder_(std::move(make_responder)),
      match_timeout_(match_timeout) {}

ServerCore::~ServerCore() = default;

TakeStatus ServerCore::take(TakenSample& out, PublisherPort*& responder, ErrorCode& error,
                            std::chrono::nanoseconds timeout) noexcept {
  const TakeStatus status = requests_->take(out, error, timeout);
  if (status != TakeStatus::Taken) return status;
  responder = responder_for(held()->info(out.token).publisher_id);
  return status;
}

PublisherPort* ServerCore::responder_for(std::uint64_t client) noexcept {
  if (last_ < responders_.size() && responders_[last_].first == client) [[likely]]
    return responders_[last_].second.get();
  for (std::size_t i = 0; i < responders_.size(); ++i) {
    if (responders_[i].first == client) {
      last_ = i;
      return responders_[i].second.get();
    }
  }
  // A new client (its first call): the publisher of its responses, once
  // matched with the client's subscriber, which exists before its first
  // call. Clients that left (their queue is gone) are forgotten now, unless
  // something still answers through their responder: a request of theirs
  // still held (a Request, the C or Python handle keeps the pointer until
  // it is destroyed) or a response loan not yet published or returned.
  try {
    std::erase_if(responders_, [&](const auto& r) {
      const std::uint64_t id = r.first;
      return r.second->subscriber_count() == 0 && r.second->loans_out() == 0 &&
             !held()->holds_from(id);
    });
    auto port = make_responder_(client);
    const auto deadline = std::chrono::steady_clock::now() + match_timeout_;
    while (port->subscriber_count() == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        log_line(spdlog::level::warn,
                 "service '{}': client {} did not match its response queue within {} ms; "
                 "its call is not answered",
                 service_, client, match_timeout_.count());
        return nullptr;
      }
      std::this_thread::sleep_for(
          std::chrono::microseconds(50));  // off the hot path: once per client
    }
    responders_.emplace_back(client, std::move(port));
    last_ = responders_.size() - 1;
    return responders_.back().second.get();
  } catch (const std::exception& e) {
    log_line(spdlog::level::warn, "service '{}': cannot answer client {}: {}", service_, client,
             e.what());
    return nullptr;
  }
}

PublishResult ServerCore::respond(PublisherPort* responder, std::uint64_t sequence,
                                  const void* data, std::uint32_t size) noexcept {
  if (responder == nullptr) return PublishResult{};
  responder->set_next_sequence(sequence);
  return responder->publish(data, size);
}

PublishResult ServerCore::respond_loan(PublisherPort* responder, std::uint64_t sequence,
                                       LoanedChunk& chunk, std::size_t size) noexcept {
  if (responder == nullptr) return PublishResult{};
  responder->set_next_sequence(sequence);
  return responder->publish_loan(chunk, size);
}

void ServerCore::respond_none(PublisherPort* responder, std::uint64_t sequence) noexcept {
  if (responder == nullptr) return;
  responder->set_next_sequence(sequence | kNoResponseBit);
  // The payload is not read: zeros inline, or an untouched chunk.
  static constexpr std::array<std::byte, 4096> kZeros{};
  const std::size_t size = responder->sample_size();
  if (size <= kZeros.size()) {
    (void)responder->publish(kZeros.data(), static_cast<std::uint32_t>(size));
    return;
  }
  if (auto chunk = responder->loan(size)) (void)responder->publish_loan(*chunk, size);
}

PublisherPort* ServerCore::known_responder(std::uint64_t client) const noexcept {
  for (const auto& [id, port] : responders_)
    if (id == client) return port.get();
  return nullptr;
}

std::size_t ServerCore::client_count() const noexcept {
  return static_cast<std::size_t>(std::ranges::count_if(
      responders_, [](const auto& r) { return r.second->subscriber_count() != 0; }));
}

}  // namespace ferry::detail
