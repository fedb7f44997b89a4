// Services through the C API (docs/services.md, docs/c-api.md): clients,
// servers, calls and requests. Pendings and requests are the caller's
// structs, so that a call allocates nothing.
#include "ferry/config/service.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <variant>

#include "error.hpp"
#include "ferry/detail/service_core.hpp"
#include "ferry/discovery/client.hpp"
#include "handles.hpp"
#include "timeout.hpp"

using ferry::c::fail;
using ferry::c::fail_null;
using ferry::c::guarded;
using ferry::c::to_timeout;

struct ferry_client_s {
  std::unique_ptr<ferry::detail::ClientCore> core;
  std::size_t request_size = 0;
  std::size_t response_size = 0;
};

struct ferry_server_s {
  std::unique_ptr<ferry::detail::ServerCore> core;
  std::size_t request_size = 0;
  std::size_t response_size = 0;
};

namespace {

constexpr std::chrono::milliseconds kAskTimeout{3000};

// The type a service topic carries, as ferryd serves it ({} when unknown).
struct Served {
  std::string type_name;
  std::uint64_t size = 0;
};

Served served_type(ferry::discovery::Client& client, const std::string& topic) {
  auto reply = client.request(ferry::discovery::ListTopics{0, topic, 0}, kAskTimeout);
  if (!reply) throw ferry::Error(reply.error());
  if (const auto* list = std::get_if<ferry::discovery::TopicList>(&*reply)) {
    for (const auto& t : list->topics) {
      if (t.name == topic) return {t.type_name, t.sample_size};
    }
  }
  return {};
}

// Throws ferry::Error unless the service carries these types (it must be
// declared: an undeclared service's types are fixed by C++ ports).
void check_types(const std::string& domain, const std::string& service, const char* request_type,
                 std::size_t request_size, const char* response_type, std::size_t response_size) {
  if (!ferry::config::is_valid_service_name(service))
    throw ferry::Error(fmt::format("'{}' is not a valid service name", service));
  auto client = ferry::discovery::Client::connect(domain, "ferry-c", kAskTimeout);
  if (!client) throw ferry::Error(client.error());
  const Served request = served_type(*client, ferry::config::service_request_topic(service));
  const Served response = served_type(*client, ferry::config::service_response_template(service));
  if (request.type_name.empty() || response.type_name.empty()) {
    throw ferry::Error(
        fmt::format("service '{}' is not declared in the configuration; the C API "
                    "serves declared services (declare it under 'services:')",
                    service));
  }
  auto check = [&](const char* what, const Served& s, const char* name, std::size_t size) {
    if (s.type_name != name || s.size != size) {
      throw ferry::Error(
          fmt::format("type mismatch on service '{}': the {} type given is '{}' "
                      "(size {}) but the service's is '{}' (size {})",
                      service, what, name, size, s.type_name, s.size));
    }
  };
  check("request", request, request_type, request_size);
  check("response", response, response_type, response_size);
}

ferry::detail::ClientCore::Sent to_sent(const ferry_pending_t& p) noexcept {
  return {static_cast<std::uint32_t>(p.opaque[0]), static_cast<std::uint32_t>(p.opaque[1]),
          p.sequence};
}

ferry_error_t call_error(ferry::ErrorCode code, const char* call, const std::string& service) {
  return ferry::c::fail_code(code, call, service.c_str());
}

// ferry_client_create and ferry_server_create: the arguments checked, the
// types checked against the declared service, then the handle made.
template <class Handle, class Make>
ferry_error_t create_endpoint(const char* call, const char* out_name, ferry_node_t* node,
                              const char* service, const char* request_type, size_t request_size,
                              const char* response_type, size_t response_size, Handle** out,
                              Make&& make) {
  if (out == nullptr) return fail_null(call, out_name);
  *out = nullptr;
  if (node == nullptr) return fail_null(call, "node");
  if (service == nullptr) return fail_null(call, "service");
  if (request_type == nullptr) return fail_null(call, "request_type");
  if (response_type == nullptr) return fail_null(call, "response_type");
  return guarded(call, [&] {
    check_types(node->node.domain(), service, request_type, request_size, response_type,
                response_size);
    auto made = std::make_unique<Handle>();
    made->core = make();
    made->request_size = request_size;
    made->response_size = response_size;
    *out = made.release();
    return FERRY_OK;
  });
}

}  // namespace

extern "C" {

ferry_error_t ferry_client_create(ferry_node_t* node, const char* service, const char* request_type,
                                  size_t request_size, const char* response_type,
                                  size_t response_size, ferry_client_t** client) {
  return create_endpoint("ferry_client_create", "the client out-pointer", node, service,
                         request_type, request_size, response_type, response_size, client,
                         [&] { return node->node.raw_client(service); });
}

void ferry_client_destroy(ferry_client_t* client) { delete client; }

ferry_error_t ferry_client_wait_for_server(ferry_client_t* client, uint64_t timeout_ns) {
  if (client == nullptr) return fail_null("ferry_client_wait_for_server", "client");
  if (client->core->wait_for_server(to_timeout(timeout_ns))) return FERRY_OK;
  return call_error(ferry::ErrorCode::NoServer, "ferry_client_wait_for_server",
                    client->core->service());
}

ferry_error_t ferry_send(ferry_client_t* client, const void* request, ferry_pending_t* pending) {
  constexpr const char* kCall = "ferry_send";
  if (client == nullptr) [[unlikely]]
    return fail_null(kCall, "client");
  if (request == nullptr) [[unlikely]]
    return fail_null(kCall, "request");
  if (pending == nullptr) [[unlikely]]
    return fail_null(kCall, "pending");
  auto sent = client->core->send(request, static_cast<std::uint32_t>(client->request_size));
  if (!sent) return call_error(sent.error(), kCall, client->core->service());
  pending->opaque[0] = sent->slot;
  pending->opaque[1] = sent->generation;
  pending->sequence = sent->sequence;
  return FERRY_OK;
}

ferry_error_t ferry_pending_take(ferry_client_t* client, ferry_pending_t* pending, void* response,
                                 uint64_t timeout_ns) {
  constexpr const char* kCall = "ferry_pending_take";
  if (client == nullptr) [[unlikely]]
    return fail_null(kCall, "client");
  if (pending == nullptr) [[unlikely]]
    return fail_null(kCall, "pending");
  if (response == nullptr) [[unlikely]]
    return fail_null(kCall, "response");
  ferry::detail::TakenSample taken;
  ferry::ErrorCode error{};
  switch (client->core->take(to_sent(*pending), to_timeout(timeout_ns), taken, error)) {
    case ferry::detail::ClientCore::Outcome::Taken: {
      const std::size_t n = taken.size < client->response_size ? taken.size : client->response_size;
      std::memcpy(response, taken.data, n);
      ferry::detail::release_held(client->core->held(), taken.token);
      return FERRY_OK;
    }
    case ferry::detail::ClientCore::Outcome::Empty:
      return call_error(ferry::ErrorCode::Timeout, kCall, client->core->service());
    case ferry::detail::ClientCore::Outcome::Failed:
      break;
  }
  return call_error(error, kCall, client->core->service());
}

void ferry_pending_abandon(ferry_client_t* client, ferry_pending_t* pending) {
  if (client == nullptr || pending == nullptr) return;
  client->core->abandon(to_sent(*pending));
}

ferry_error_t ferry_call(ferry_client_t* client, const void* request, void* response,
                         uint64_t timeout_ns) {
  ferry_pending_t pending{};
  if (const ferry_error_t e = ferry_send(client, request, &pending); e != FERRY_OK) return e;
  return ferry_pending_take(client, &pending, response, timeout_ns == 0 ? 1 : timeout_ns);
}

ferry_error_t ferry_server_create(ferry_node_t* node, const char* service, const char* request_type,
                                  size_t request_size, const char* response_type,
                                  size_t response_size, ferry_server_t** server) {
  return create_endpoint("ferry_server_create", "the server out-pointer", node, service,
                         request_type, request_size, response_type, response_size, server,
                         [&] { return node->node.raw_server(service); });
}

void ferry_server_destroy(ferry_server_t* server) { delete server; }

ferry_error_t ferry_take_request(ferry_server_t* server, uint64_t timeout_ns,
                                 ferry_request_t* request, int* taken) {
  constexpr const char* kCall = "ferry_take_request";
  if (taken == nullptr) [[unlikely]]
    return fail_null(kCall, "taken");
  *taken = 0;
  if (server == nullptr) [[unlikely]]
    return fail_null(kCall, "server");
  if (request == nullptr) [[unlikely]]
    return fail_null(kCall, "request");
  ferry::detail::TakenSample sample;
  ferry::detail::PublisherPort* responder = nullptr;
  ferry::ErrorCode error{};
  switch (server->core->take(sample, responder, error, to_timeout(timeout_ns))) {
    case ferry::detail::TakeStatus::Taken: {
      const ferry::SampleInfo i = server->core->held()->sample_info(sample.token);
      request->data = sample.data;
      request->size = sample.size;
      request->info = ferry_sample_info_t{i.sequence, i.publisher_id, i.publish_time_ns};
      request->opaque[0] = sample.token;
      request->opaque[1] = reinterpret_cast<std::uintptr_t>(responder);
      request->opaque[2] = 1;  // not answered yet
      *taken = 1;
      return FERRY_OK;
    }
    case ferry::detail::TakeStatus::Empty:
      return FERRY_OK;
    case ferry::detail::TakeStatus::Failed:
      break;
  }
  return call_error(error, kCall, server->core->service());
}

namespace {

// The request's way back, or null when it was answered already.
ferry::detail::PublisherPort* open_request(ferry_request_t& request) noexcept {
  if (request.opaque[2] != 1) return nullptr;
  return reinterpret_cast<ferry::detail::PublisherPort*>(
      static_cast<std::uintptr_t>(request.opaque[1]));
}

void close_request(ferry_server_t& server, ferry_request_t& request) noexcept {
  ferry::detail::release_held(server.core->held(), static_cast<std::uint32_t>(request.opaque[0]));
  request.opaque[2] = 0;
  request.data = nullptr;
}

}  // namespace

ferry_error_t ferry_respond(ferry_server_t* server, ferry_request_t* request,
                            const void* response) {
  constexpr const char* kCall = "ferry_respond";
  if (server == nullptr) [[unlikely]]
    return fail_null(kCall, "server");
  if (request == nullptr) [[unlikely]]
    return fail_null(kCall, "request");
  if (response == nullptr) [[unlikely]]
    return fail_null(kCall, "response");
  if (request->opaque[2] != 1) [[unlikely]]
    return fail(FERRY_ERROR_INVALID_ARGUMENT, "%s: the request was answered or dropped already",
                kCall);
  ferry::detail::PublisherPort* responder = open_request(*request);
  (void)ferry::detail::ServerCore::respond(responder, request->info.sequence, response,
                                           static_cast<std::uint32_t>(server->response_size));
  close_request(*server, *request);
  return FERRY_OK;
}

void ferry_request_drop(ferry_server_t* server, ferry_request_t* request) {
  if (server == nullptr || request == nullptr || request->opaque[2] != 1) return;
  ferry::detail::ServerCore::respond_none(open_request(*request), request->info.sequence);
  close_request(*server, *request);
}

}  // extern "C"
