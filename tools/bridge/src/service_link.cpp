// What both directions of a bridged service share (service_link.hpp): the
// DDS names, types and QoS of rmw_cyclonedds, the client/service id in the
// endpoints' user data, the thread and its counts.
#include "service_link.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>

#include "ferry/config/ros2msg.hpp"
#include "ferry/config/service.hpp"

namespace ferry::bridge {

namespace {

// Requests (export) and replies (import) a reader holds before DDS holds
// back the writer: backpressure instead of an unbounded history.
constexpr std::int32_t kMaxQueued = 256;

const config::Service& declared_service(const config::Config& config, const std::string& name) {
  for (const config::Service& s : config.services)
    if (s.name == name) return s;
  throw BridgeError(fmt::format(
      "service '{}' is not declared in the configuration ferryd serves (the bridge needs its "
      "types to map it onto DDS)",
      name));
}

std::string strip_suffix(std::string s, std::string_view suffix) {
  if (s.size() > suffix.size() && s.ends_with(suffix)) s.resize(s.size() - suffix.size());
  return s;
}

// RELIABLE, KEEP_ALL up to kMaxQueued, VOLATILE: what a ROS 2 client or
// service with the default service QoS (reliable, volatile) matches.
struct QosDeleter {
  void operator()(dds_qos_t* q) const noexcept { dds_delete_qos(q); }
};
using Qos = std::unique_ptr<dds_qos_t, QosDeleter>;

Qos service_qos(const std::string& user_data) {
  Qos q(dds_create_qos());
  dds_qset_reliability(q.get(), DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_history(q.get(), DDS_HISTORY_KEEP_ALL, 0);
  dds_qset_resource_limits(q.get(), kMaxQueued, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_qset_durability(q.get(), DDS_DURABILITY_VOLATILE);
  dds_qset_writer_data_lifecycle(q.get(), false);
  if (!user_data.empty()) dds_qset_userdata(q.get(), user_data.data(), user_data.size());
  return q;
}

// rmw_cyclonedds' client/service id: the participant's GUID prefix (12
// bytes) and a big-endian counter, written as hex bytes joined by '.'.
std::string endpoint_id(dds_entity_t participant, std::uint32_t counter) {
  dds_guid_t guid{};
  if (dds_get_guid(participant, &guid) != DDS_RETCODE_OK) return {};
  for (int i = 0; i < 4; ++i) guid.v[12 + i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
  std::string out = fmt::format("{:02x}", guid.v[0]);
  for (std::size_t i = 1; i < sizeof guid.v; ++i) out += fmt::format(".{:x}", guid.v[i]);
  return out;
}

}  // namespace

ServiceNames service_names(const config::Config& config, const config::Service& service) {
  // "pkg/msg/AddTwoIntsRequest" -> package "pkg", service type "AddTwoInts".
  const std::string ros = config::ros2_type_name(config.schema, service.request_index);
  const auto first = ros.find('/');
  const auto last = ros.rfind('/');
  std::string package = ros.substr(0, first);
  const std::string base = strip_suffix(strip_suffix(ros.substr(last + 1), "Request"), "_");
  std::string prefix;
  for (char c : package) {
    if (c == '/') {
      prefix += "::";
    } else {
      prefix += c;
    }
  }
  prefix += "::srv::dds_::" + base;
  return ServiceNames{"rq/" + service.name + "Request", "rr/" + service.name + "Reply",
                      prefix + "_Request_", prefix + "_Response_"};
}

ServiceLink::ServiceLink(const config::Config& config, const config::Service& service,
                         bool is_export, dds_entity_t participant,
                         std::chrono::milliseconds call_timeout, std::uint32_t id)
    : service_(service),
      is_export_(is_export),
      call_timeout_(call_timeout),
      request_size_(config.schema.type(service.request_index).size),
      response_size_(config.schema.type(service.response_index).size),
      names_(service_names(config, service)) {
  for (std::size_t t : {service.request_index, service.response_index}) {
    if (config.schema.type(t).variable)
      throw BridgeError(fmt::format(
          "service '{}': its type '{}' has a bounded string or sequence (string<=N, T[<=N]), "
          "which the bridge does not carry yet; expected fixed-size request and response types",
          service.name, config.schema.type(t).name));
  }
  request_type_ =
      DdsType::with_request_header(config.schema, service.request_index, names_.request_type);
  response_type_ =
      DdsType::with_request_header(config.schema, service.response_index, names_.response_type);
  const std::string user_data =
      fmt::format("{}={};", is_export ? "serviceid" : "clientid", endpoint_id(participant, id));
  const Qos qos = service_qos(user_data);
  request_topic_ = DdsEntity(dds_create_topic(participant, request_type_.descriptor(),
                                              names_.request_topic.c_str(), nullptr, nullptr),
                             "topic " + names_.request_topic);
  reply_topic_ = DdsEntity(dds_create_topic(participant, response_type_.descriptor(),
                                            names_.reply_topic.c_str(), nullptr, nullptr),
                           "topic " + names_.reply_topic);
  // The listener wakes the thread's WaitSet; set at creation, so that no
  // sample comes before it.
  std::unique_ptr<dds_listener_t, void (*)(dds_listener_t*)> listener(dds_create_listener(this),
                                                                      dds_delete_listener);
  dds_lset_data_available(listener.get(), on_data);
  const Qos reader_qos(dds_create_qos());
  (void)dds_copy_qos(reader_qos.get(), qos.get());
  // What this bridge writes (an import of the same service) is never read back.
  dds_qset_ignorelocal(reader_qos.get(), DDS_IGNORELOCAL_PARTICIPANT);
  const dds_entity_t written = is_export ? reply_topic_.get() : request_topic_.get();
  const dds_entity_t read = is_export ? request_topic_.get() : reply_topic_.get();
  writer_ =
      DdsEntity(dds_create_writer(participant, written, qos.get(), nullptr),
                "writer of " + std::string(is_export ? names_.reply_topic : names_.request_topic));
  reader_ =
      DdsEntity(dds_create_reader(participant, read, reader_qos.get(), listener.get()),
                "reader of " + std::string(is_export ? names_.request_topic : names_.reply_topic));
  spdlog::info(
      "bridge: service '{}' ({} -> {}, {} -> {}) {} DDS topics '{}' and '{}' as a ROS 2 {}",
      service.name, service.request, names_.request_type, service.response, names_.response_type,
      is_export ? "exported: serves" : "imported: calls", names_.request_topic, names_.reply_topic,
      is_export ? "service" : "client");
}

ServiceLink::~ServiceLink() { stop(); }

void ServiceLink::on_data(dds_entity_t /*reader*/, void* arg) {
  static_cast<ServiceLink*>(arg)->wait_set_.notify();
}

void ServiceLink::start(ferry::Node& node) {
  if (is_export_) {
    client_ = node.raw_client(service_.name);
    (void)wait_set_.attach(*client_);
  } else {
    server_ = node.raw_server(service_.name);
    (void)wait_set_.attach(*server_);
  }
  thread_ = std::jthread([this] {
    try {
      if (is_export_) {
        run_export();
      } else {
        run_import();
      }
    } catch (const std::exception& e) {
      spdlog::error("bridge: service '{}' stopped: {}", service_.name, e.what());
    }
  });
}

void ServiceLink::stop() {
  // SYNC: relaxed; the thread polls it after each wake-up, and join() orders the rest.
  stop_.store(true, std::memory_order_relaxed);
  wait_set_.notify();
  if (thread_.joinable()) thread_.join();
  // Returns once a callback in progress is done; none starts after it.
  if (reader_.get() > 0) (void)dds_set_listener(reader_.get(), nullptr);
}

void ServiceLink::fail(unsigned kind, const std::string& sentence) {
  // SYNC: relaxed; a statistic.
  counters_.failed.fetch_add(1, std::memory_order_relaxed);
  if (once_.first(kind))
    spdlog::warn("bridge: service '{}' ({}): {} (logged once; the counts say how often)",
                 service_.name, is_export_ ? "export" : "import", sentence);
}

std::string ServiceLink::counts() const {
  // SYNC: relaxed loads; statistics.
  const auto get = [](const std::atomic<std::uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
  };
  return fmt::format("service '{}' ({}): calls {} answered {} failed {} stray_replies {}",
                     service_.name, is_export_ ? "export" : "import", get(counters_.calls),
                     get(counters_.answered), get(counters_.failed), get(counters_.stray));
}

ServiceBridges::ServiceBridges(const config::Config& config, const Options& options,
                               dds_entity_t participant) {
  std::map<std::string, bool> wanted;  // name -> is_export
  for (const auto& name : options.export_services) wanted[name] = true;
  for (const auto& name : options.import_services) {
    if (wanted.contains(name))
      throw BridgeError(fmt::format(
          "service '{}' is both exported and imported: a bridge carries a service one way "
          "(its server is on one side)",
          name));
    wanted[name] = false;
  }
  std::uint32_t id = 0;
  for (const auto& [name, is_export] : wanted)
    links_.emplace_back(config, declared_service(config, name), is_export, participant,
                        options.service_timeout, ++id);
}

ServiceBridges::~ServiceBridges() { stop(); }

void ServiceBridges::start(ferry::Node& node) {
  for (ServiceLink& l : links_) l.start(node);
}

void ServiceBridges::stop() {
  for (ServiceLink& l : links_) l.stop();
}

void ServiceBridges::print_counts(const char* when) const {
  for (const ServiceLink& l : links_)
    std::fputs(fmt::format("bridge {}: {}\n", when, l.counts()).c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace ferry::bridge
