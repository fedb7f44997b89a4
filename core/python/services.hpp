#pragma once
// The Python side of services (docs/services.md): Client.call(dict) and
// Server.take_request() / Request.respond(dict), requests and responses as
// dicts of the service's declared types.

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/config/config.hpp"
#include "ferry/detail/service_core.hpp"
#include "ferry/node.hpp"

namespace ferry::python {

// A declared service's types, from the configuration ferryd serves.
struct ServiceSchema {
  std::string service;
  std::shared_ptr<const config::Config> config;  // owns the types
  const config::Type* request = nullptr;
  const config::Type* response = nullptr;
};
[[nodiscard]] ServiceSchema describe_service(const std::string& domain, const std::string& name);

class Client {
 public:
  Client(std::unique_ptr<detail::ClientCore> core, ServiceSchema schema);
  // The response as a dict; ferry.Error naming the reason (NoServer,
  // Timeout, ServerGone, TooManyPending, NoResponse). Releases the GIL
  // while it waits.
  pybind11::dict call(pybind11::handle request, std::optional<double> timeout);
  // Sends `request` without waiting (ferry.Error: NoServer, TooManyPending).
  detail::ClientCore::Sent send(pybind11::handle request);
  // The response to `sent` as a dict, waiting up to `timeout` (GIL
  // released); with `try_only` never waits and returns None when it has
  // not come. ferry.Error ends the call (Timeout, ServerGone, NoResponse).
  pybind11::object finish(const detail::ClientCore::Sent& sent, std::chrono::nanoseconds timeout,
                          bool try_only);
  void abandon(const detail::ClientCore::Sent& sent) noexcept { core_->abandon(sent); }
  bool wait_for_server(std::optional<double> timeout);
  [[nodiscard]] bool has_server() const noexcept { return core_->has_server(); }
  [[nodiscard]] const std::string& service() const noexcept { return schema_.service; }
  [[nodiscard]] detail::ClientCore& core() noexcept { return *core_; }

 private:
  std::unique_ptr<detail::ClientCore> core_;
  ServiceSchema schema_;
  std::vector<std::byte> buffer_;
  bool busy_ = false;  // see InUse (ports.hpp)
};

// A call sent with Client.send(): take() or try_take() its response. It
// holds its Client; dropped untaken, its response is dropped when it comes.
class Pending {
 public:
  Pending(pybind11::object client, detail::ClientCore::Sent sent);
  ~Pending();
  Pending(Pending&&) noexcept;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  Pending& operator=(Pending&&) = delete;

  pybind11::dict take(std::optional<double> timeout);
  pybind11::object try_take();
  [[nodiscard]] std::uint64_t sequence() const noexcept { return sent_.sequence; }

 private:
  Client& client();  // ferry.Error once the call ended
  pybind11::object client_;
  detail::ClientCore::Sent sent_;
  bool done_ = false;
};

struct ServerHold;

// One request a Server took: read it as a dict, answer it once.
class Request {
 public:
  Request(std::shared_ptr<ServerHold> server, const detail::TakenSample& taken,
          detail::PublisherPort* responder);
  ~Request();
  Request(Request&&) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request& operator=(Request&&) = delete;

  [[nodiscard]] pybind11::object item(const std::string& field) const;
  [[nodiscard]] pybind11::dict to_dict() const;
  [[nodiscard]] SampleInfo info() const;
  // Answers with `response` (a dict; missing fields are zero); at most once.
  void respond(pybind11::handle response);
  [[nodiscard]] bool answered() const noexcept { return answered_; }

 private:
  void finish() noexcept;  // NoResponse if unanswered; the request goes back
  std::shared_ptr<ServerHold> server_;
  detail::TakenSample taken_;
  detail::PublisherPort* responder_;
  std::uint64_t sequence_ = 0;
  bool answered_ = false;
};

class Server {
 public:
  Server(std::unique_ptr<detail::ServerCore> core, ServiceSchema schema);
  // None when no request came within `timeout` seconds (None: never waits).
  std::optional<Request> take_request(std::optional<double> timeout);
  [[nodiscard]] const std::string& service() const noexcept;
  [[nodiscard]] detail::ServerCore& core() noexcept;

 private:
  std::shared_ptr<ServerHold> hold_;
};

}  // namespace ferry::python
