// What Server<Req, Resp> and Client<Req, Resp> call of their cores
// (ferry/detail/service_api.hpp): each forwards to the core's member.
#include "ferry/detail/service_api.hpp"

#include "ferry/detail/service_core.hpp"

void std::default_delete<ferry::detail::ServerCore>::operator()(
    ferry::detail::ServerCore* core) const noexcept {
  delete core;
}
void std::default_delete<ferry::detail::ClientCore>::operator()(
    ferry::detail::ClientCore* core) const noexcept {
  delete core;
}

namespace ferry::detail {

TakeStatus server_take(ServerCore& core, TakenSample& out, PublisherPort*& responder,
                       ErrorCode& error, std::chrono::nanoseconds timeout) noexcept {
  return core.take(out, responder, error, timeout);
}
PublishResult server_respond(PublisherPort* responder, std::uint64_t sequence, const void* data,
                             std::uint32_t size) noexcept {
  return ServerCore::respond(responder, sequence, data, size);
}
PublishResult server_respond_loan(PublisherPort* responder, std::uint64_t sequence,
                                  LoanedChunk& chunk, std::size_t size) noexcept {
  return ServerCore::respond_loan(responder, sequence, chunk, size);
}
void server_respond_none(PublisherPort* responder, std::uint64_t sequence) noexcept {
  ServerCore::respond_none(responder, sequence);
}
HeldSamples* server_held(const ServerCore& core) noexcept { return core.held(); }
std::uint32_t server_client_count(ServerCore& core) noexcept {
  return core.requests().publisher_count();
}
const std::string& server_service(const ServerCore& core) noexcept { return core.service(); }
SubscriberPort& server_requests(ServerCore& core) noexcept { return core.requests(); }

std::expected<SentCall, ErrorCode> client_send(ClientCore& core, const void* data,
                                               std::uint32_t size) noexcept {
  return core.send(data, size);
}
CallOutcome client_take(ClientCore& core, const SentCall& sent, std::chrono::nanoseconds timeout,
                        TakenSample& out, ErrorCode& error) noexcept {
  return core.take(sent, timeout, out, error);
}
void client_abandon(ClientCore& core, const SentCall& sent) noexcept { core.abandon(sent); }
bool client_wait_for_server(const ClientCore& core, std::chrono::nanoseconds timeout) noexcept {
  return core.wait_for_server(timeout);
}
bool client_has_server(const ClientCore& core) noexcept { return core.has_server(); }
HeldSamples* client_held(const ClientCore& core) noexcept { return core.held(); }
std::uint64_t client_late_responses(const ClientCore& core) noexcept {
  return core.late_responses();
}
std::uint32_t client_pending(const ClientCore& core) noexcept { return core.pending(); }
std::uint32_t client_capacity(const ClientCore& core) noexcept { return core.capacity(); }
const std::string& client_service(const ClientCore& core) noexcept { return core.service(); }
SubscriberPort& client_responses(ClientCore& core) noexcept { return core.responses(); }

}  // namespace ferry::detail
