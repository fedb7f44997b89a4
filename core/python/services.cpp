#include "services.hpp"

#include <fmt/format.h>

#include <cstring>

#include "ferry/config/service.hpp"
#include "ferry/error_name.hpp"
#include "ports.hpp"
#include "sample_values.hpp"
#include "topic_schema.hpp"

namespace py = pybind11;

namespace ferry::python {

// The server and what its requests need: requests hold it, so a request
// answered after its Server object is gone still finds its way back.
struct ServerHold {
  ServerHold(std::unique_ptr<detail::ServerCore> c, ServiceSchema s)
      : core(std::move(c)), schema(std::move(s)) {}
  std::unique_ptr<detail::ServerCore> core;
  ServiceSchema schema;
  bool busy = false;  // see InUse (ports.hpp)
};

ServiceSchema describe_service(const std::string& domain, const std::string& name) {
  // The configuration, as topics get it (one round trip to ferryd).
  TopicSchema topic = describe_topic(domain, config::service_request_topic(name));
  ServiceSchema s;
  s.service = name;
  s.config = topic.config;
  const config::Service* declared = s.config->find_service(name);
  if (declared == nullptr) {
    throw Error(
        fmt::format("service '{}' is not declared in the configuration, so its types' "
                    "fields are unknown to Python; declare it under 'services:'",
                    name));
  }
  s.request = &s.config->schema.type(declared->request_index);
  s.response = &s.config->schema.type(declared->response_index);
  return s;
}

namespace {

[[noreturn]] void call_failed(const std::string& service, ErrorCode code) {
  throw Error(fmt::format("call of service '{}' failed: {} ({})", service, ferry::name_of(code),
                          to_string(code)));
}

}  // namespace

Client::Client(std::unique_ptr<detail::ClientCore> core, ServiceSchema schema)
    : core_(std::move(core)), schema_(std::move(schema)), buffer_(schema_.request->size) {}

bool Client::wait_for_server(std::optional<double> timeout) {
  const auto wait = to_timeout(timeout, "wait_for_server");
  const py::gil_scoped_release unlocked;
  return core_->wait_for_server(wait);
}

py::dict Client::call(py::handle request, std::optional<double> timeout) {
  const auto sent = send(request);
  return finish(sent, to_timeout(timeout.value_or(1.0), "call"), false);
}

detail::ClientCore::Sent Client::send(py::handle request) {
  const InUse in_use(busy_, "send()", schema_.service);
  std::fill(buffer_.begin(), buffer_.end(), std::byte{0});
  encode_struct(schema_.config->schema, *schema_.request, request, buffer_.data(), "");
  auto sent = core_->send(buffer_.data(), static_cast<std::uint32_t>(buffer_.size()));
  if (!sent) call_failed(schema_.service, sent.error());
  return *sent;
}

py::object Client::finish(const detail::ClientCore::Sent& sent, std::chrono::nanoseconds timeout,
                          bool try_only) {
  const InUse in_use(busy_, "take()", schema_.service);
  detail::TakenSample taken;
  ErrorCode error{};
  detail::ClientCore::Outcome outcome{};
  {
    const py::gil_scoped_release unlocked;
    const auto wait = try_only ? std::chrono::nanoseconds::zero()
                               : std::max(timeout, std::chrono::nanoseconds(1));
    outcome = core_->take(sent, wait, taken, error);
  }
  if (outcome == detail::ClientCore::Outcome::Empty) {
    if (try_only) return py::none();
    error = ErrorCode::Timeout;
  }
  if (outcome != detail::ClientCore::Outcome::Taken) call_failed(schema_.service, error);
  py::dict out;
  try {
    out = struct_value(schema_.config->schema, *schema_.response,
                       static_cast<const std::byte*>(taken.data));
  } catch (...) {
    detail::release_held(core_->held(), taken.token);
    throw;
  }
  detail::release_held(core_->held(), taken.token);
  return out;
}

Pending::Pending(py::object client, detail::ClientCore::Sent sent)
    : client_(std::move(client)), sent_(sent) {}

Pending::Pending(Pending&& other) noexcept
    : client_(std::move(other.client_)), sent_(other.sent_), done_(other.done_) {
  other.done_ = true;
}

// Abandoning a call that ended already does nothing (its slot is free, or
// another call's: the generation differs).
Pending::~Pending() {
  if (client_) client_.cast<Client&>().abandon(sent_);
}

Client& Pending::client() {
  if (done_ || !client_) throw Error("the call ended already: a Pending gives one response");
  return client_.cast<Client&>();
}

py::dict Pending::take(std::optional<double> timeout) {
  Client& c = client();
  const auto wait = to_timeout(timeout.value_or(1.0), "take");
  done_ = true;  // a response, or an error that ends the call
  return c.finish(sent_, wait, false);
}

py::object Pending::try_take() {
  Client& c = client();
  py::object out;
  try {
    out = c.finish(sent_, std::chrono::nanoseconds::zero(), true);
  } catch (...) {
    done_ = true;
    throw;
  }
  if (!out.is_none()) done_ = true;
  return out;
}

Request::Request(std::shared_ptr<ServerHold> server, const detail::TakenSample& taken,
                 detail::PublisherPort* responder)
    : server_(std::move(server)),
      taken_(taken),
      responder_(responder),
      sequence_(server_->core->held()->info(taken.token).sequence) {}

Request::Request(Request&& other) noexcept
    : server_(std::move(other.server_)),
      taken_(other.taken_),
      responder_(other.responder_),
      sequence_(other.sequence_),
      answered_(other.answered_) {}

Request::~Request() { finish(); }

void Request::finish() noexcept {
  if (server_ == nullptr) return;
  if (!answered_) detail::ServerCore::respond_none(responder_, sequence_);
  detail::release_held(server_->core->held(), taken_.token);
  server_.reset();
}

py::object Request::item(const std::string& field) const {
  const py::dict all = to_dict();
  if (!all.contains(field)) {
    throw Error(
        fmt::format("request of service '{}' has no field '{}'", server_->schema.service, field));
  }
  return all[field.c_str()];
}

py::dict Request::to_dict() const {
  if (server_ == nullptr) throw Error("the request was answered and released");
  const ServiceSchema& s = server_->schema;
  return struct_value(s.config->schema, *s.request, static_cast<const std::byte*>(taken_.data));
}

SampleInfo Request::info() const {
  if (server_ == nullptr) throw Error("the request was answered and released");
  return server_->core->held()->sample_info(taken_.token);
}

void Request::respond(py::handle response) {
  if (server_ == nullptr || answered_) {
    throw Error("the request was answered already; a request gets one response");
  }
  const ServiceSchema& s = server_->schema;
  std::vector<std::byte> bytes(s.response->size);
  encode_struct(s.config->schema, *s.response, response, bytes.data(), "");
  answered_ = true;
  (void)detail::ServerCore::respond(responder_, sequence_, bytes.data(),
                                    static_cast<std::uint32_t>(bytes.size()));
  finish();
}

Server::Server(std::unique_ptr<detail::ServerCore> core, ServiceSchema schema)
    : hold_(std::make_shared<ServerHold>(std::move(core), std::move(schema))) {}

const std::string& Server::service() const noexcept { return hold_->schema.service; }
detail::ServerCore& Server::core() noexcept { return *hold_->core; }

std::optional<Request> Server::take_request(std::optional<double> timeout) {
  const InUse in_use(hold_->busy, "take_request()", hold_->schema.service);
  const auto wait = to_timeout(timeout, "take_request");
  detail::TakenSample taken;
  detail::PublisherPort* responder = nullptr;
  ErrorCode error{};
  detail::TakeStatus status{};
  {
    const py::gil_scoped_release unlocked;
    status = hold_->core->take(taken, responder, error, wait);
  }
  if (status == detail::TakeStatus::Failed) {
    throw Error(fmt::format("take_request() on service '{}' failed: {}", hold_->schema.service,
                            to_string(error)));
  }
  if (status == detail::TakeStatus::Empty) return std::nullopt;
  return Request(hold_, taken, responder);
}

}  // namespace ferry::python
