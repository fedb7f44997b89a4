#pragma once
/// @file
/// Services: request/response between processes (docs/services.md).
/// Server<Req, Resp> takes requests and answers each one; Client<Req, Resp>
/// calls, and waits for the answer or picks it up later (Pending).
#include <chrono>
#include <cstdint>
#include <cstring>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "ferry/detail/service_api.hpp"
#include "ferry/error.hpp"
#include "ferry/loan.hpp"
#include "ferry/sample.hpp"
#include "ferry/sample_info.hpp"

namespace ferry {

class Node;
class WaitSet;
class Executor;

/// What a call returns: the response, or why there is none.
template <class T, class E>
using expected = std::expected<T, E>;

/// One request a Server took: read it (`->`, `*`), answer it once with
/// respond(). Destroyed unanswered, it answers NoResponse. Move-only; it
/// must not outlive its server.
template <class Req, class Resp>
class Request {
 public:
  /// Move-only: the moved-from request holds nothing (and answers nothing).
  ///@{
  Request(Request&& other) noexcept
      : held_(std::exchange(other.held_, nullptr)),
        token_(other.token_),
        value_(other.value_),
        responder_(other.responder_),
        sequence_(other.sequence_) {}
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, nullptr);
      token_ = other.token_;
      value_ = other.value_;
      responder_ = other.responder_;
      sequence_ = other.sequence_;
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ///@}
  /// Answers NoResponse if respond() was not called; releases the request.
  ~Request() { reset(); }

  /// The request, read-only (in its ring slot or pool chunk).
  ///@{
  [[nodiscard]] const Req& operator*() const noexcept { return *value_; }
  [[nodiscard]] const Req* operator->() const noexcept { return value_; }
  [[nodiscard]] const Req* get() const noexcept { return value_; }
  ///@}
  /// sequence: the client's call number; publisher_id: the client;
  /// publish_time_ns: when it called.
  [[nodiscard]] SampleInfo info() const noexcept { return held_->sample_info(token_); }

  /// Answers the call with a copy of `response` (at most once; later calls
  /// do nothing). `delivered` is 0 when the client is gone.
  PublishResult respond(const Resp& response) noexcept {
    if (answered_) return PublishResult{};
    answered_ = true;
    return detail::server_respond(responder_, sequence_, &response,
                                  static_cast<std::uint32_t>(sizeof(Resp)));
  }
  /// A response to write in place in the shared pool (large responses),
  /// then respond(std::move(loan)) without a copy.
  std::expected<Loan<Resp>, ErrorCode> loan_response() noexcept {
    if (responder_ == nullptr) return std::unexpected(ErrorCode::PortClosed);
    auto chunk = responder_->loan(sizeof(Resp));
    if (!chunk) return std::unexpected(chunk.error());
    return Loan<Resp>(responder_, *chunk);
  }
  /// Answers with a loan from loan_response(); the loan is consumed.
  PublishResult respond(Loan<Resp>&& loan) noexcept {
    if (answered_ || loan.port_ != responder_ || responder_ == nullptr) return PublishResult{};
    answered_ = true;
    loan.port_ = nullptr;
    return detail::server_respond_loan(responder_, sequence_, loan.chunk_, sizeof(Resp));
  }
  /// Whether respond() was called.
  [[nodiscard]] bool answered() const noexcept { return answered_; }

 private:
  template <class, class>
  friend class Server;
  Request(detail::HeldSamples* held, const detail::TakenSample& taken,
          detail::PublisherPort* responder) noexcept
      : held_(held),
        token_(taken.token),
        value_(static_cast<const Req*>(taken.data)),
        responder_(responder),
        sequence_(held->info(taken.token).sequence) {}
  void reset() noexcept {
    if (held_ == nullptr) return;
    if (!answered_) detail::server_respond_none(responder_, sequence_);
    detail::release_held(std::exchange(held_, nullptr), token_);
  }

  detail::HeldSamples* held_;
  std::uint32_t token_;
  const Req* value_;
  detail::PublisherPort* responder_;  // null: the client cannot be answered
  std::uint64_t sequence_;
  bool answered_ = false;
};

/// The one server of a service (Node::server): takes its clients' requests.
/// Move-only; use from one thread at a time.
template <class Req, class Resp>
class Server {
  static_assert(std::is_trivially_copyable_v<Req> && std::is_trivially_copyable_v<Resp>,
                "ferry requests and responses must be trivially copyable");

 public:
  /// The next request, waiting up to `timeout` (zero: never waits); empty
  /// when none came (or on an error: try_take_request says which).
  std::optional<Request<Req, Resp>> take_request(
      std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept {
    auto taken = try_take_request(timeout);
    if (!taken || !taken->has_value()) return std::nullopt;
    return std::move(**taken);
  }
  /// As take_request(), but says why nothing came back when it is an error
  /// (TooManyHeld: the server holds max_held requests unanswered;
  /// NodeDeclaredDead, ...).
  std::expected<std::optional<Request<Req, Resp>>, ErrorCode> try_take_request(
      std::chrono::nanoseconds timeout = std::chrono::nanoseconds::zero()) noexcept {
    detail::TakenSample taken;
    detail::PublisherPort* responder = nullptr;
    ErrorCode error{};
    switch (detail::server_take(*core_, taken, responder, error, timeout)) {
      case detail::TakeStatus::Taken:
        return std::optional<Request<Req, Resp>>(
            Request<Req, Resp>(detail::server_held(*core_), taken, responder));
      case detail::TakeStatus::Failed:
        return std::unexpected(error);
      case detail::TakeStatus::Empty:
        break;
    }
    return std::optional<Request<Req, Resp>>();
  }
  /// Clients matched now (their request queues).
  [[nodiscard]] std::uint32_t client_count() const noexcept {
    return detail::server_client_count(*core_);
  }
  /// The service's name.
  [[nodiscard]] const std::string& service() const noexcept {
    return detail::server_service(*core_);
  }

 private:
  friend class Node;
  friend class WaitSet;
  explicit Server(std::unique_ptr<detail::ServerCore> core) : core_(std::move(core)) {}
  std::unique_ptr<detail::ServerCore> core_;
};

template <class Req, class Resp>
class Client;

/// A call sent with Client::send(): take() its response later. Destroyed
/// untaken, its response is dropped when it comes. Move-only; use it on its
/// client's thread, while the client lives.
template <class Req, class Resp>
class Pending {
 public:
  /// Move-only: the moved-from handle holds nothing.
  ///@{
  Pending(Pending&& other) noexcept
      : core_(std::exchange(other.core_, nullptr)), sent_(other.sent_) {}
  Pending& operator=(Pending&& other) noexcept {
    if (this != &other) {
      reset();
      core_ = std::exchange(other.core_, nullptr);
      sent_ = other.sent_;
    }
    return *this;
  }
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  ///@}
  ~Pending() { reset(); }

  /// Waits up to `timeout` for the response: Timeout, ServerGone,
  /// NoResponse, ... end the call (a later response is dropped); taking
  /// again after that is PortClosed.
  std::expected<Sample<Resp>, ErrorCode> take(std::chrono::nanoseconds timeout) noexcept {
    if (core_ == nullptr) return std::unexpected(ErrorCode::PortClosed);
    detail::TakenSample taken;
    ErrorCode error{};
    switch (detail::client_take(
        *core_, sent_, timeout.count() > 0 ? timeout : std::chrono::nanoseconds(1), taken, error)) {
      case detail::CallOutcome::Taken:
        return make(taken);
      case detail::CallOutcome::Empty:
        return std::unexpected(ErrorCode::Timeout);
      case detail::CallOutcome::Failed:
        break;
    }
    return std::unexpected(error);
  }
  /// Never waits: the response if it came, empty if not yet; an error
  /// (ServerGone, NoResponse, ...) ends the call.
  std::expected<std::optional<Sample<Resp>>, ErrorCode> try_take() noexcept {
    if (core_ == nullptr) return std::unexpected(ErrorCode::PortClosed);
    detail::TakenSample taken;
    ErrorCode error{};
    switch (detail::client_take(*core_, sent_, std::chrono::nanoseconds::zero(), taken, error)) {
      case detail::CallOutcome::Taken:
        return std::optional<Sample<Resp>>(make(taken));
      case detail::CallOutcome::Empty:
        return std::optional<Sample<Resp>>();
      case detail::CallOutcome::Failed:
        break;
    }
    return std::unexpected(error);
  }
  /// The call's number (the request's SampleInfo::sequence at the server).
  [[nodiscard]] std::uint64_t sequence() const noexcept { return sent_.sequence; }

 private:
  friend class Client<Req, Resp>;
  Pending(detail::ClientCore* core, detail::SentCall sent) noexcept : core_(core), sent_(sent) {}
  Sample<Resp> make(const detail::TakenSample& taken) const noexcept {
    return Sample<Resp>(detail::client_held(*core_), taken.token,
                        static_cast<const Resp*>(taken.data));
  }
  void reset() noexcept {
    if (core_ != nullptr) detail::client_abandon(*std::exchange(core_, nullptr), sent_);
  }
  detail::ClientCore* core_;
  detail::SentCall sent_;
};

/// Calls a service (Node::client). Up to the service's `capacity` calls in
/// flight. Move-only; use from one thread at a time.
template <class Req, class Resp>
class Client {
  static_assert(std::is_trivially_copyable_v<Req> && std::is_trivially_copyable_v<Resp>,
                "ferry requests and responses must be trivially copyable");

 public:
  /// Waits up to `timeout` for a server; true once there is one.
  bool wait_for_server(std::chrono::nanoseconds timeout) const noexcept {
    return detail::client_wait_for_server(*core_, timeout);
  }
  /// Whether the service has a server now.
  [[nodiscard]] bool has_server() const noexcept { return detail::client_has_server(*core_); }
  /// Sends `request` and waits up to `timeout` for its response: NoServer,
  /// Timeout, ServerGone, TooManyPending, NoResponse are error values.
  std::expected<Sample<Resp>, ErrorCode> call(const Req& request,
                                              std::chrono::nanoseconds timeout) noexcept {
    auto pending = send(request);
    if (!pending) return std::unexpected(pending.error());
    return pending->take(timeout);
  }
  /// Sends `request` without waiting (NoServer, TooManyPending).
  std::expected<Pending<Req, Resp>, ErrorCode> send(const Req& request) noexcept {
    auto sent = detail::client_send(*core_, &request, static_cast<std::uint32_t>(sizeof(Req)));
    if (!sent) return std::unexpected(sent.error());
    return Pending<Req, Resp>(core_.get(), *sent);
  }
  /// Responses dropped because their call had ended (timed out, or its
  /// Pending destroyed untaken).
  [[nodiscard]] std::uint64_t late_responses() const noexcept {
    return detail::client_late_responses(*core_);
  }
  /// Calls in flight now.
  [[nodiscard]] std::uint32_t pending() const noexcept { return detail::client_pending(*core_); }
  /// Calls in flight at most: the service's `capacity`.
  [[nodiscard]] std::uint32_t capacity() const noexcept { return detail::client_capacity(*core_); }
  /// The service's name.
  [[nodiscard]] const std::string& service() const noexcept {
    return detail::client_service(*core_);
  }

 private:
  friend class Node;
  friend class WaitSet;
  explicit Client(std::unique_ptr<detail::ClientCore> core) : core_(std::move(core)) {}
  std::unique_ptr<detail::ClientCore> core_;
};

}  // namespace ferry
