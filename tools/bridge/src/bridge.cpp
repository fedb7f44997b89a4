// ferry bridge: sets up a DDS participant and, per topic, the DDS topic with
// the run-time type, the local port and the DDS endpoint; one thread per
// link (imports that never wait to publish run on Cyclone's receive thread
// instead); prints the counts until stopped.
#include "ferry/bridge/bridge.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "dds_ports.hpp"
#include "ferry/config/ros2msg.hpp"
#include "import_qos.hpp"
#include "qos.hpp"
#include "service_link.hpp"
#include "topic_link.hpp"

namespace ferry::bridge {

namespace {

constexpr auto kStopPoll = std::chrono::milliseconds(100);

const config::Topic& declared_topic(const config::Config& config, const std::string& name) {
  const config::Topic* topic = config.find_topic(name);
  if (topic == nullptr)
    throw BridgeError(
        fmt::format("topic '{}' is not declared in the configuration ferryd serves "
                    "(the bridge needs its type to map it onto DDS)",
                    name));
  return *topic;
}

std::string msg_definition(const config::Config& config, const config::Topic& topic) {
  return topic.is_bytes() ? config::ros2msg_bytes_definition()
                          : config::ros2msg_definition(config.schema, *topic.type_index);
}

std::string ros_type(const config::Config& config, const config::Topic& topic) {
  return topic.is_bytes() ? config::ros2_bytes_type_name()
                          : config::ros2_type_name(config.schema, *topic.type_index);
}

TopicCounts snapshot(const BridgedTopic& t) {
  // SYNC: relaxed loads; statistics (see LinkCounters).
  const auto get = [](const std::atomic<std::uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
  };
  return TopicCounts{t.topic->name,
                     get(t.counts.exported),
                     get(t.counts.imported),
                     get(t.counts.echoes),
                     get(t.counts.undecodable),
                     get(t.counts.not_published),
                     get(t.counts.write_failed),
                     get(t.counts.too_large)};
}

void print_counts(const std::vector<TopicCounts>& counts, const char* when) {
  for (const TopicCounts& c : counts) {
    std::fputs(
        fmt::format("bridge {}: {}: exported {} imported {} echoes_skipped {} undecodable {} "
                    "not_published {} write_failed {} too_large {}\n",
                    when, c.topic, c.exported, c.imported, c.echoes, c.undecodable, c.not_published,
                    c.write_failed, c.too_large)
            .c_str(),
        stdout);
  }
  std::fflush(stdout);
}

// Cyclone's configuration: a remote bridge killed -9 is noticed after 2 s
// (Cyclone's default lease is 10 s, during which a reliable writer waits for
// the dead reader's acknowledgements); writes are batched until the
// exporter flushes them (export_link.cpp); then CYCLONEDDS_URI, which may
// override both.
std::string cyclone_config() {
  std::string config =
      "<CycloneDDS><Domain><Discovery><LeaseDuration>2 s</LeaseDuration></Discovery>"
      "<Internal><WriteBatch>true</WriteBatch></Internal></Domain></CycloneDDS>";
  if (const char* uri = std::getenv("CYCLONEDDS_URI"); uri != nullptr && *uri != '\0')
    config += std::string(",") + uri;
  return config;
}

// Logs when the DDS endpoints on the other side come and go (a remote
// bridge started, killed or restarted): the flows here carry on regardless.
void report_matches(const std::string& topic, bool is_export, dds_entity_t endpoint,
                    std::int32_t& last) {
  std::int32_t now = last;
  if (is_export) {
    dds_publication_matched_status_t st{};
    if (dds_get_publication_matched_status(endpoint, &st) == DDS_RETCODE_OK)
      now = static_cast<std::int32_t>(st.current_count);
  } else {
    dds_subscription_matched_status_t st{};
    if (dds_get_subscription_matched_status(endpoint, &st) == DDS_RETCODE_OK)
      now = static_cast<std::int32_t>(st.current_count);
  }
  if (now == last) return;
  spdlog::info("bridge: 'rt/{}' ({}): {} DDS {} matched (was {})", topic,
               is_export ? "export" : "import", now, is_export ? "reader(s)" : "writer(s)", last);
  last = now;
}

// Logs when the local subscribers an import reaches come and go: from the
// line "N local subscriber(s)" on, every import reaches those N (the
// publisher's count rises once their queues are attached).
void report_local(const std::string& topic, const RawPublisher& publisher, std::uint32_t& last) {
  const std::uint32_t now = publisher.subscriber_count();
  if (now == last) return;
  spdlog::info("bridge: '{}' (import): {} local subscriber(s) (was {})", topic, now, last);
  last = now;
}

// The bridge never runs on silently without its domain: while ferryd is
// unreachable it says so (after 1 s, then at 2, 4, 8 ... up to every 60 s;
// its node keeps retrying and established flows go on), and once the node
// was declared dead (its ports are closed for good) the bridge stops.
class DaemonWatch {
 public:
  // Empty while the bridge should go on; else why it stops.
  std::string check(const ferry::Node& node) {
    if (std::string dead = node.declared_dead(); !dead.empty()) {
      return fmt::format(
          "node '{}' of domain '{}' lost its ports ({}); the bridge stops: start it again (a "
          "service manager restarts it)",
          node.name(), node.domain(), dead);
    }
    const auto now = std::chrono::steady_clock::now();
    if (node.connected()) {
      if (lost_since_) {
        spdlog::info("bridge: ferryd of domain '{}' is back after {} s", node.domain(),
                     seconds_since(*lost_since_, now));
      }
      lost_since_.reset();
      return {};
    }
    if (!lost_since_) {
      lost_since_ = now;
      report_every_ = std::chrono::seconds(1);
      next_report_ = now + report_every_;
    }
    if (now >= next_report_) {
      spdlog::warn(
          "bridge: ferryd of domain '{}' is unreachable for {} s; established flows go on, "
          "retrying",
          node.domain(), seconds_since(*lost_since_, now));
      report_every_ = std::min<std::chrono::seconds>(report_every_ * 2, std::chrono::seconds(60));
      next_report_ = now + report_every_;
    }
    return {};
  }

 private:
  static long long seconds_since(std::chrono::steady_clock::time_point from,
                                 std::chrono::steady_clock::time_point now) {
    return std::chrono::duration_cast<std::chrono::seconds>(now - from).count();
  }
  std::optional<std::chrono::steady_clock::time_point> lost_since_;
  std::chrono::steady_clock::time_point next_report_{};
  std::chrono::seconds report_every_{1};
};

}  // namespace

void check_options(const Options& options) {
  if (options.exports.empty() && options.imports.empty() && options.export_services.empty() &&
      options.import_services.empty())
    throw BridgeError(
        "nothing to bridge: give --export TOPIC, --import TOPIC, --export-service NAME or "
        "--import-service NAME");
  if (const std::string range_error = domain_range_error(options.dds_domain.value_or(0));
      !range_error.empty())
    throw BridgeError(range_error);
}

std::vector<TopicCounts> run(const config::Config& config, const Options& options,
                             const std::function<bool()>& stop_requested) {
  check_options(options);
  // Every topic named, once, with what it does.
  std::map<std::string, std::pair<bool, bool>> wanted;  // name -> (export, import)
  for (const auto& name : options.exports) wanted[name].first = true;
  for (const auto& name : options.imports) wanted[name].second = true;

  const dds_domainid_t dds_domain = options.dds_domain.value_or(0);
  const std::string port_note = ephemeral_port_note(dds_domain);
  if (!port_note.empty()) spdlog::warn("bridge: {}", port_note);
  const dds_entity_t domain_handle = dds_create_domain(dds_domain, cyclone_config().c_str());
  if (domain_handle < 0) {
    throw BridgeError(fmt::format("cannot create the DDS domain {}: {}{}", dds_domain,
                                  dds_strretcode(domain_handle),
                                  port_note.empty() ? "" : " (" + port_note + ")"));
  }
  const DdsEntity domain(domain_handle, "domain " + std::to_string(dds_domain));
  const DdsEntity participant(dds_create_participant(dds_domain, nullptr, nullptr), "participant");
  // The exporters sleep at once when their queue is empty: on the 2-CPU
  // test VM, spinning first (the default 1024 polls) took the CPU the next
  // hop needed, 64 B one-way p50 66 us against 41 us without (medians of
  // 10 and 14 bridge_measure runs); an adaptive spin (20 us, only while
  // samples came closer than that) measured no better than none.
  ferry::Node node{options.node_name, ferry::NodeOptions{.domain = options.domain, .take_spin = 0}};

  std::list<BridgedTopic> topics;  // stable addresses: the threads hold references
  std::vector<RawSubscriber> subscribers;
  std::vector<RawPublisher> publishers;
  std::list<ImportOnReceive> receive_links;  // stable addresses: the listeners hold them
  std::vector<DdsEntity> endpoints;
  struct Job {
    BridgedTopic* topic;
    bool is_export;
    std::size_t port;
    dds_entity_t endpoint;
    bool on_receive_thread = false;   // an import served by its reader's listener, no thread
    std::int32_t matched = 0;         // remote DDS readers (export) or writers (import), last seen
    std::uint32_t local = 0;          // import: local subscribers its publisher reaches, last seen
    std::size_t endpoint_index = 0;   // in `endpoints`
    std::size_t qos = 0;              // import: in `import_qos`
    ImportOnReceive* link = nullptr;  // import on the receive thread: what its listener uses
  };
  std::vector<Job> jobs;
  std::vector<ImportQos> import_qos;
  subscribers.reserve(wanted.size());
  publishers.reserve(wanted.size());

  for (const auto& [name, dirs] : wanted) {
    const config::Topic& topic = declared_topic(config, name);
    BridgedTopic& t = topics.emplace_back();
    t.topic = &topic;
    t.schema = &config.schema;
    t.type = topic.is_bytes() ? DdsType::bytes() : DdsType(config.schema, *topic.type_index);
    const QosPtr qos = topic_qos(topic.settings);
    t.dds_topic = DdsEntity(dds_create_topic(participant.get(), t.type.descriptor(),
                                             ("rt/" + name).c_str(), qos.get(), nullptr),
                            "topic rt/" + name);
    spdlog::info(
        "bridge: topic '{}' ({}) <-> DDS topic 'rt/{}' type '{}'{}{}; its ROS 2 message "
        "{}:\n{}",
        name, topic.type, name, t.type.name(), dirs.first ? ", exported" : "",
        dirs.second ? ", imported" : "", ros_type(config, topic), msg_definition(config, topic));
    if (dirs.first) {
      subscribers.push_back(node.raw_subscriber(name));
      endpoints.emplace_back(
          dds_create_writer(participant.get(), t.dds_topic.get(), qos.get(), nullptr),
          "writer of rt/" + name);
      jobs.push_back({&t, true, subscribers.size() - 1, endpoints.back().get()});
      jobs.back().endpoint_index = endpoints.size() - 1;
    }
    if (dirs.second) {
      publishers.push_back(node.raw_publisher(name));
      if (dirs.first) t.importer_id = publishers.back().publisher_id();
      QosPtr reader_qos = import_reader_qos(topic.settings);
      // Set at creation, so that no sample comes before the listener.
      const bool on_receive = imports_on_receive_thread(topic);
      ListenerPtr listener;
      ImportOnReceive* link = nullptr;
      if (on_receive) {
        link = &receive_links.emplace_back(&t, &publishers.back());
        listener = import_listener(*link);
      }
      endpoints.emplace_back(
          dds_create_reader(participant.get(), t.dds_topic.get(), reader_qos.get(), listener.get()),
          "reader of rt/" + name);
      // SYNC: release; pairs with the acquire loads in run_import (its thread starts later).
      t.import_reader.store(endpoints.back().get(), std::memory_order_release);
      jobs.push_back({&t, false, publishers.size() - 1, endpoints.back().get(), on_receive});
      jobs.back().endpoint_index = endpoints.size() - 1;
      jobs.back().qos = import_qos.size();
      jobs.back().link = link;
      import_qos.emplace_back(name, std::move(reader_qos));
    }
  }

  ServiceBridges services(config, options, participant.get());
  services.start(node);

  // SYNC: relaxed; each link thread polls it and only stops: it publishes
  // no data (the threads are joined before anything they wrote is read).
  std::atomic<bool> stop{false};
  std::vector<std::jthread> threads;
  for (const Job& job : jobs) {
    if (job.on_receive_thread) continue;
    threads.emplace_back([&, job] {
      try {
        if (job.is_export) {
          run_export(*job.topic, subscribers[job.port], job.endpoint, options.export_spin, stop);
        } else {
          run_import(*job.topic, publishers[job.port], job.topic->import_reader, stop);
        }
      } catch (const std::exception& e) {
        spdlog::error("bridge: topic '{}' stopped: {}", job.topic->topic->name, e.what());
      }
    });
  }
  spdlog::info("bridge: running as node '{}' in domain '{}', DDS domain {}", node.name(),
               node.domain(), dds_domain);

  const auto all_counts = [&] {
    std::vector<TopicCounts> out;
    for (const BridgedTopic& t : topics) out.push_back(snapshot(t));
    return out;
  };
  // An import's reader whose QoS must adapt to the DDS writers it found
  // (import_qos.hpp) is replaced: the old one is deleted first, so that no
  // sample is read twice (one written in between is not read at all).
  const auto replace_reader = [&](Job& job, QosPtr qos) {
    const std::string& name = job.topic->topic->name;
    if (job.on_receive_thread) (void)dds_set_listener(job.endpoint, nullptr);
    endpoints[job.endpoint_index] = DdsEntity();
    ListenerPtr listener;
    if (job.link != nullptr) listener = import_listener(*job.link);
    try {
      endpoints[job.endpoint_index] =
          DdsEntity(dds_create_reader(participant.get(), job.topic->dds_topic.get(), qos.get(),
                                      listener.get()),
                    "reader of rt/" + name);
    } catch (const BridgeError& e) {
      spdlog::error("bridge: import '{}' stopped: {}", name, e.what());
      return;
    }
    job.endpoint = endpoints[job.endpoint_index].get();
    job.matched = 0;
    // SYNC: release; pairs with the acquire load in run_import.
    job.topic->import_reader.store(job.endpoint, std::memory_order_release);
    import_qos[job.qos].adopted(std::move(qos));
  };
  auto next_print = std::chrono::steady_clock::now() + options.stats_interval;
  DaemonWatch daemon_watch;
  std::string failure;  // why the bridge stops on its own (its node was declared dead)
  while (!stop_requested()) {
    std::this_thread::sleep_for(kStopPoll);
    failure = daemon_watch.check(node);
    if (!failure.empty()) break;
    for (Job& job : jobs) {
      if (job.is_export) {
        report_offered_incompatible(job.topic->topic->name, job.endpoint);
      } else if (auto adapted = import_qos[job.qos].check(job.endpoint)) {
        replace_reader(job, std::move(*adapted));
      }
      report_matches(job.topic->topic->name, job.is_export, job.endpoint, job.matched);
      if (!job.is_export) report_local(job.topic->topic->name, publishers[job.port], job.local);
    }
    if (std::chrono::steady_clock::now() >= next_print) {
      print_counts(all_counts(), "counts");
      services.print_counts("counts");
      next_print += options.stats_interval;
    }
  }
  // SYNC: relaxed; the threads poll it, and join() orders everything after.
  stop.store(true, std::memory_order_relaxed);
  threads.clear();  // joins
  services.stop();
  // Returns once a callback in progress is done; none starts after it.
  for (const Job& job : jobs)
    if (job.on_receive_thread) (void)dds_set_listener(job.endpoint, nullptr);
  auto final_counts = all_counts();
  print_counts(final_counts, "at exit");
  services.print_counts("at exit");
  if (!failure.empty()) throw BridgeError(failure);
  return final_counts;
}

}  // namespace ferry::bridge
