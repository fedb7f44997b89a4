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
