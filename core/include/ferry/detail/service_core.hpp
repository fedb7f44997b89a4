#pragma once
// The untyped halves of Server<Req, Resp> and Client<Req, Resp>
// (ferry/service.hpp, which sees them through ferry/detail/service_api.hpp). A service travels on
// topics (ferry/config/service.hpp names them): every client publishes its requests on the
// service's request topic, which the server subscribes, so each (client, server) pair has one
// request ring; the server answers each client on that client's response
// topic, one ring per pair again. Large requests and responses travel by
// pool reference, as any sample does.
//
// A response's SampleInfo::sequence is the sequence of the request it
// answers (the client's request publisher numbers its calls 0, 1, 2, ...);
// kNoResponseBit in it says the server dropped the request unanswered.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/detail/ports.hpp"
#include "ferry/detail/service_api.hpp"
#include "ferry/error.hpp"
#include "ferry/publish_result.hpp"

namespace ferry::detail {

inline constexpr std::uint64_t kNoResponseBit = std::uint64_t{1} << 63;

class ServerCore {
 public:
  // Makes the publisher of one client's response topic (a ferryd round trip).
  using ResponderFactory = std::function<std::unique_ptr<PublisherPort>(std::uint64_t client)>;
  ServerCore(std::string service, std::unique_ptr<SubscriberPort> requests,
             ResponderFactory make_responder, std::chrono::milliseconds match_timeout);
  ~ServerCore();
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  // Takes the next request, waiting up to `timeout`; `responder` is the way
  // back to its client (null when that client could not be reached: its
  // answer is dropped). The first request of a client costs a round trip to
  // ferryd (its responder is made), the others none.
  TakeStatus take(TakenSample& out, PublisherPort*& responder, ErrorCode& error,
                  std::chrono::nanoseconds timeout) noexcept;
  // Answers the call `sequence` with `size` bytes at `data`.
  static PublishResult respond(PublisherPort* responder, std::uint64_t sequence, const void* data,
                               std::uint32_t size) noexcept;
  // Answers the call `sequence` with a loaned chunk (consumed).
  static PublishResult respond_loan(PublisherPort* responder, std::uint64_t sequence,
                                    LoanedChunk& chunk, std::size_t size) noexcept;
  // Tells the client the call `sequence` gets no answer (NoResponse).
  static void respond_none(PublisherPort* responder, std::uint64_t sequence) noexcept;

  [[nodiscard]] SubscriberPort& requests() noexcept { return *requests_; }
  // The way back to `client` (its request publisher's id) as take() made
  // it, or null once that client was forgotten (it left, and a new client
  // came since). Never waits. A responder stays while a request of its
  // client is held or one of its loans is out; for answers given after the
  // request was released (the bridge keeps only the client's id), look it
  // up again by id.
  [[nodiscard]] PublisherPort* known_responder(std::uint64_t client) const noexcept;
  [[nodiscard]] HeldSamples* held() const noexcept { return requests_->held(); }
  [[nodiscard]] const std::string& service() const noexcept { return service_; }
  // Clients it has answered and that are still there.
  [[nodiscard]] std::size_t client_count() const noexcept;

 private:
  PublisherPort* responder_for(std::uint64_t client) noexcept;

  std::string service_;
  std::unique_ptr<SubscriberPort> requests_;
  ResponderFactory make_responder_;
  std::chrono::milliseconds match_timeout_;
  // Client (its request publisher's id) -> the publisher of its responses.
  std::vector<std::pair<std::uint64_t, std::unique_ptr<PublisherPort>>> responders_;
  std::size_t last_ = 0;  // responders_ index of the last lookup: a client calls in runs
};

class ClientCore {
 public:
  ClientCore(std::string service, std::unique_ptr<PublisherPort> requests,
             std::unique_ptr<SubscriberPort> responses, std::uint32_t capacity);
  ~ClientCore();
  ClientCore(const ClientCore&) = delete;
  ClientCore& operator=(const ClientCore&) = delete;

  using Sent = SentCall;
  // Sends `size` bytes at `data` as a call: NoServer, TooManyPending, or
  // the request publisher's error.
  std::expected<Sent, ErrorCode> send(const void* data, std::uint32_t size) noexcept;
  // Waits up to `timeout` for the response to `sent` (zero: looks once).
  // Empty: not yet (only when the timeout was zero and Timeout is not
  // wanted: `zero_is_empty`). The call is finished unless Empty.
  using Outcome = CallOutcome;
  Outcome take(const Sent& sent, std::chrono::nanoseconds timeout, TakenSample& out,
               ErrorCode& error) noexcept;
  // The call's answer will not be taken: it is dropped when it comes.
  void abandon(const Sent& sent) noexcept;
  // Routes every response queued now to its call (never waits): one that
  // answers no call in flight is dropped and counted as late. For callers
  // that sleep on the response queue (a WaitSet) with no call in flight.
  void drain() noexcept;
  // Whether a server is matched (its request queue attached).
  [[nodiscard]] bool has_server() const noexcept { return requests_->subscriber_count() != 0; }
  [[nodiscard]] bool wait_for_server(std::chrono::nanoseconds timeout) const noexcept;
  [[nodiscard]] HeldSamples* held() const noexcept { return responses_->held(); }
  [[nodiscard]] SubscriberPort& responses() noexcept { return *responses_; }
  [[nodiscard]] const std::string& service() const noexcept { return service_; }
  // Responses that came after their call ended (timed out, abandoned) or
  // that answer no call of ours: dropped, and counted here.
  [[nodiscard]] std::uint64_t late_responses() const noexcept { return late_; }
  [[nodiscard]] std::uint32_t capacity() const noexcept {
    return static_cast<std::uint32_t>(slots_.size());
  }
  [[nodiscard]] std::uint32_t pending() const noexcept { return pending_; }
  // Whether a call in flight has its outcome already (a response routed to
  // it, or its failure) but was not taken yet: a response one take() routed
  // to another call no longer makes the response queue ready.
  [[nodiscard]] bool has_outcome() const noexcept {
    return std::ranges::any_of(slots_, [](const Slot& s) {
      return s.state == SlotState::Arrived || s.state == SlotState::Failed;
    });
  }

 private:
  enum class SlotState : std::uint8_t { Free, Waiting, Arrived, Failed };
  struct Slot {
    SlotState state = SlotState::Free;
    std::uint32_t generation = 0;
    std::uint64_t sequence = 0;
    TakenSample taken;
    ErrorCode error{};
  };
  // One response out of the ring: to its call's slot, or dropped.
  void route(const TakenSample& taken) noexcept;
  // Every call in flight ends with `error` (ServerGone).
  void fail_waiting(ErrorCode error) noexcept;
  void finish(Slot& slot) noexcept;
  [[nodiscard]] bool current(const Sent& sent) const noexcept {
    return sent.slot < slots_.size() && slots_[sent.slot].generation == sent.generation &&
           slots_[sent.slot].state != SlotState::Free;
  }

  std::string service_;
  std::unique_ptr<PublisherPort> requests_;
  std::unique_ptr<SubscriberPort> responses_;
  std::vector<Slot> slots_;  // one per call in flight (capacity), made once
  std::uint32_t pending_ = 0;
  std::uint64_t late_ = 0;
};

}  // namespace ferry::detail
