// ferry service list | info | call (docs/services.md): the services of a
// running domain, and a call from the command line, its request built from a
// flow map and its response decoded with the YAML schema (as topic pub and
// topic echo do).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "ferry/config/service.hpp"
#include "ferry/detail/service_core.hpp"
#include "ferry/error_name.hpp"
#include "sample_codec.hpp"
#include "service_ports.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

Json port_json(const discovery::PortInfo& p) { return {{"node", p.node}, {"pid", p.pid}}; }

std::string response_type(const config::Config& config, const std::string& service) {
  const config::Service* s = config.find_service(service);
  return s != nullptr ? s->response : std::string("?");
}

Json service_json(const ServiceView& v, const config::Config& config, bool ports) {
  const config::Service* declared = config.find_service(v.name);
  Json out = {{"name", v.name},
              {"request", v.request_type},
              {"response", response_type(config, v.name)},
              {"capacity", v.capacity},
              {"max_clients", declared != nullptr ? Json(declared->max_clients) : Json(nullptr)},
              {"server", v.server ? port_json(*v.server) : Json(nullptr)}};
  if (ports) {
    Json clients = Json::array();
    for (const auto& c : v.clients) clients.push_back(port_json(c));
    out["clients"] = std::move(clients);
  } else {
    out["clients"] = v.clients.size();
  }
  return out;
}

std::string server_text(const ServiceView& v) {
  return v.server ? fmt::format("{} (pid {})", v.server->node, v.server->pid) : "-";
}

void service_list(const Context& context, bool json) {
  auto client = connect_daemon(context);
  const auto services = services_of(list_topics(client));
  const config::Config config = fetch_config(client);
  if (json) {
    Json out = Json::array();
    for (const auto& v : services) out.push_back(service_json(v, config, false));
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  Table table({"SERVICE", "REQUEST", "RESPONSE", "CAPACITY", "SERVER", "CLIENTS"});
  for (const auto& v : services) {
    table.add({v.name, v.request_type, response_type(config, v.name), std::to_string(v.capacity),
               server_text(v), std::to_string(v.clients.size())});
  }
  std::fputs(table.render().c_str(), stdout);
}

ServiceView find_service(discovery::Client& client, const std::string& name) {
  if (!config::is_valid_service_name(name))
    throw Failure(kExitUsage, fmt::format("'{}' is not a valid service name", name));
  const auto services = services_of(list_topics(client, config::service_request_topic(name)));
  if (services.empty()) {
    throw Failure(kExitRuntime,
                  fmt::format("service '{}' is not served in this domain: it is not declared "
                              "under 'services:' and no program uses it",
                              name));
  }
  return services.front();
}

std::string fields_text(const config::Config& config, const std::string& type_name) {
  const auto index = config.schema.index_of(type_name);
  if (!index) return type_name;
  const config::Type& type = config.schema.type(*index);
  std::string out;
  for (const auto& f : type.fields)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", f.name, f.type_text);
  return fmt::format("{} {{{}}}", type_name, out);
}

void service_info(const Context& context, const std::string& name, bool json) {
  auto client = connect_daemon(context);
  const ServiceView v = find_service(client, name);
  const config::Config config = fetch_config(client);
  if (json) {
    std::printf("%s\n", service_json(v, config, true).dump(2).c_str());
    return;
  }
  std::printf("service:  %s\n", v.name.c_str());
  std::printf("request:  %s\n", fields_text(config, v.request_type).c_str());
  std::printf("response: %s\n", fields_text(config, response_type(config, v.name)).c_str());
  std::printf("capacity: %u calls in flight per client\n", v.capacity);
  std::printf("server:   %s\n", server_text(v).c_str());
  std::printf("clients:  %zu\n", v.clients.size());
  for (const auto& c : v.clients) std::printf("  %s (pid %d)\n", c.node.c_str(), c.pid);
}

void service_call(const Context& context, const ServiceCallOptions& o) {
  const std::string domain = context.domain();
  auto daemon = connect_daemon(context);
  (void)find_service(daemon, o.service);
  const config::Config config = fetch_config(daemon);
  const config::Service* service = config.find_service(o.service);
  if (service == nullptr) {
    throw Failure(kExitRuntime,
                  fmt::format("service '{}' is not declared in the configuration, so its types' "
                              "fields are unknown; declare it under 'services:'",
                              o.service));
  }
  const config::Type& request_type = config.schema.type(service->request_index);
  const config::Type& reply_type = config.schema.type(service->response_index);
  auto value = parse_value(o.value);
  if (!value) throw Failure(kExitUsage, value.error());
  auto request = encode_sample(config.schema, request_type, *value);
  if (!request) {
    throw Failure(kExitUsage, fmt::format("request for service '{}' (type '{}'): {}", o.service,
                                          service->request, request.error()));
  }

  ferry::Node node{"ferry-call", ferry::NodeOptions{.domain = domain}};
  auto client = node.raw_client(o.service);
  const std::chrono::milliseconds timeout(o.timeout_ms);
  if (!client->wait_for_server(timeout)) {
    throw Failure(kExitRuntime, fmt::format("service '{}' has no server (waited {} ms)", o.service,
                                            o.timeout_ms));
  }
  auto sent = client->send(request->data(), static_cast<std::uint32_t>(request->size()));
  if (!sent) {
    throw Failure(kExitRuntime, fmt::format("call of service '{}': {}", o.service,
                                            ferry::to_string(sent.error())));
  }
  detail::TakenSample taken;
  ErrorCode error{};
  if (client->take(*sent, timeout, taken, error) != detail::ClientCore::Outcome::Taken) {
    throw Failure(kExitRuntime,
                  fmt::format("call of service '{}' failed: {} ({}; timeout {} ms)", o.service,
                              ferry::name_of(error), ferry::to_string(error), o.timeout_ms));
  }
  const Json response = decode_sample(
      config.schema, reply_type,
      std::span<const std::byte>(static_cast<const std::byte*>(taken.data), taken.size));
  detail::release_held(client->held(), taken.token);
  if (o.json) {
    std::printf("%s\n", to_json_line(response).c_str());
  } else {
    std::fputs(to_yaml_text(response).c_str(), stdout);
  }
}

}  // namespace

int run_service_list(const ServiceListOptions& o, const Context& context) {
  service_list(context, o.json);
  return kExitOk;
}

int run_service_info(const ServiceInfoOptions& o, const Context& context) {
  service_info(context, o.service, o.json);
  return kExitOk;
}

int run_service_call(const ServiceCallOptions& o, const Context& context) {
  service_call(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
