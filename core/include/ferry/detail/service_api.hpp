#pragma once
// What Server<Req, Resp> and Client<Req, Resp> (ferry/service.hpp) call of
// their untyped cores, which stay opaque here: the cores themselves are in
// ferry/detail/service_core.hpp, outside <ferry/ferry.hpp>.

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>

#include "ferry/detail/ports.hpp"
#include "ferry/error.hpp"
#include "ferry/publish_result.hpp"

namespace ferry::detail {

class ServerCore;
class ClientCore;

// A call a client sent (ClientCore::send), and what became of it.
struct SentCall {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  std::uint64_t sequence = 0;
};
enum class CallOutcome : std::uint8_t { Taken, Empty, Failed };

TakeStatus server_take(ServerCore& core, TakenSample& out, PublisherPort*& responder,
                       ErrorCode& error, std::chrono::nanoseconds timeout) noexcept;
PublishResult server_respond(PublisherPort* responder, std::uint64_t sequence, const void* data,
                             std::uint32_t size) noexcept;
PublishResult server_respond_loan(PublisherPort* responder, std::uint64_t sequence,
                                  LoanedChunk& chunk, std::size_t size) noexcept;
void server_respond_none(PublisherPort* responder, std::uint64_t sequence) noexcept;
[[nodiscard]] HeldSamples* server_held(const ServerCore& core) noexcept;
[[nodiscard]] std::uint32_t server_client_count(ServerCore& core) noexcept;
[[nodiscard]] const std::string& server_service(const ServerCore& core) noexcept;
[[nodiscard]] SubscriberPort& server_requests(ServerCore& core) noexcept;

std::expected<SentCall, ErrorCode> client_send(ClientCore& core, const void* data,
                                               std::uint32_t size) noexcept;
CallOutcome client_take(ClientCore& core, const SentCall& sent, std::chrono::nanoseconds timeout,
                        TakenSample& out, ErrorCode& error) noexcept;
void client_abandon(ClientCore& core, const SentCall& sent) noexcept;
[[nodiscard]] bool client_wait_for_server(const ClientCore& core,
                                          std::chrono::nanoseconds timeout) noexcept;
[[nodiscard]] bool client_has_server(const ClientCore& core) noexcept;
[[nodiscard]] HeldSamples* client_held(const ClientCore& core) noexcept;
[[nodiscard]] std::uint64_t client_late_responses(const ClientCore& core) noexcept;
[[nodiscard]] std::uint32_t client_pending(const ClientCore& core) noexcept;
[[nodiscard]] std::uint32_t client_capacity(const ClientCore& core) noexcept;
[[nodiscard]] const std::string& client_service(const ClientCore& core) noexcept;
[[nodiscard]] SubscriberPort& client_responses(ClientCore& core) noexcept;

}  // namespace ferry::detail

// unique_ptr<ServerCore> and unique_ptr<ClientCore> delete out of line.
template <>
struct std::default_delete<ferry::detail::ServerCore> {
  void operator()(ferry::detail::ServerCore* core) const noexcept;
};
template <>
struct std::default_delete<ferry::detail::ClientCore> {
  void operator()(ferry::detail::ClientCore* core) const noexcept;
};
