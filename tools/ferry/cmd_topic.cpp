// ferry topic list | info: the topics of a running domain, their
// configuration, ports and per-queue counters (read from shared memory).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "format.hpp"
#include "queue_counters.hpp"
#include "sample_codec.hpp"
#include "service_ports.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

// `topic list` measures the current rates by polling the queue counters for
// at most kRateWindow, less when every publisher has changed often enough.
constexpr std::chrono::milliseconds kRateWindow{500};
constexpr std::chrono::milliseconds kRateMinimum{100};
constexpr std::chrono::milliseconds kRatePoll{2};
constexpr std::size_t kEnoughChanges = 10;

std::string policy_name(discovery::Policy policy) {
  return std::string(discovery::to_string(policy));
}

std::optional<double> rounded(std::optional<double> rate) {
  if (!rate) return rate;
  return std::round(*rate * 10) / 10;
}

void topic_list(const Context& context, bool json) {
  auto client = connect_daemon(context);
  auto topics = list_topics(client);
  // A service's topics are its own plumbing: `ferry service list` shows it.
  std::erase_if(topics, [](const auto& t) { return is_service_topic(t.name); });
  RingReader rings;
  RateMeter meter;
  const bool any_queue =
      std::any_of(topics.begin(), topics.end(), [](const auto& t) { return !t.queues.empty(); });
  const auto start = std::chrono::steady_clock::now();
  auto now = start;
  while (true) {
    for (const auto& t : topics) meter.observe(snapshot(t, rings));
    now = std::chrono::steady_clock::now();
    if (!any_queue || now - start >= kRateWindow ||
        (now - start >= kRateMinimum && meter.fewest_changes() >= kEnoughChanges)) {
      break;
    }
    std::this_thread::sleep_for(kRatePoll);
  }
  std::vector<std::optional<double>> rates;
  for (const auto& t : topics) rates.push_back(rounded(meter.rate(t.name, now)));

  if (json) {
    Json out = Json::array();
    for (std::size_t i = 0; i < topics.size(); ++i) {
      const auto& t = topics[i];
      out.push_back({{"name", t.name},
                     {"type", t.type_name},
                     {"policy", policy_name(t.policy)},
                     {"capacity", t.capacity},
                     {"sample_size", t.sample_size},
                     {"publishers", t.publishers.size()},
                     {"subscribers", subscribers_of(t, false).size()},
                     {"observers", subscribers_of(t, true).size()},
                     {"rate_hz", rates[i] ? Json(*rates[i]) : Json(nullptr)}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  Table table({"TOPIC", "TYPE", "POLICY", "CAPACITY", "PUBS", "SUBS", "RATE(Hz)"});
  for (std::size_t i = 0; i < topics.size(); ++i) {
    const auto& t = topics[i];
    table.add({t.name, t.type_name, policy_name(t.policy), std::to_string(t.capacity),
               std::to_string(t.publishers.size()), std::to_string(subscribers_of(t, false).size()),
               human_rate(rates[i])});
  }
  std::fputs(table.render().c_str(), stdout);
}

// The topic's settings as the configuration declares them (or the defaults
// an undeclared topic takes).
struct Declared {
  bool declared = false;
  config::TopicSettings settings;
};

Declared declared_settings(const config::Config& config, const std::string& topic) {
  if (const config::Topic* t = config.find_topic(topic)) return {true, t->settings};
  return {false, config.defaults};
}

const discovery::PortInfo* port_by_id(const std::vector<discovery::PortInfo>& ports,
                                      std::uint64_t id) {
  for (const auto& p : ports) {
    if (p.port_id == id) return &p;
  }
  return nullptr;
}

std::string field_list(const config::Type& type) {
  std::string out;
  for (const auto& f : type.fields)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", f.name, f.type_text);
  return out;
}

void topic_info(const Context& context, const std::string& name, bool json) {
  auto client = connect_daemon(context);
  const discovery::TopicInfo t = find_topic(client, name);
  const config::Config config = fetch_config(client);
  const Declared d = declared_settings(config, name);
  RingReader rings;
  const TopicSnapshot s = snapshot(t, rings);

  const auto subscribers = subscribers_of(t, false);
  const auto observers = subscribers_of(t, true);
  auto ports_json = [](const std::vector<discovery::PortInfo>& ports) {
    Json out = Json::array();
    for (const auto& p : ports)
      out.push_back({{"node", p.node}, {"pid", p.pid}, {"port_id", p.port_id}});
    return out;
  };
  struct QueueRow {
    const discovery::QueueInfo* queue;
    const discovery::PortInfo* publisher;
    const discovery::PortInfo* subscriber;
    std::optional<QueueCounters> counters;
  };
  std::vector<QueueRow> rows;
  for (const auto& q : t.queues) {
    const auto found = s.queues.find(q.ring_shm);
    rows.push_back({&q, port_by_id(t.publishers, q.publisher_port_id),
                    port_by_id(t.subscribers, q.subscriber_port_id),
                    found == s.queues.end() ? std::nullopt : std::optional(found->second)});
  }
  const auto node_of = [](const discovery::PortInfo* p) {
    return p != nullptr ? p->node : std::string("?");
  };
  // A queue to an observer: its overwritten count is what that tool missed.
  const auto observed = [](const QueueRow& r) {
    return r.subscriber != nullptr && r.subscriber->observer;
  };

  if (json) {
    Json queues = Json::array();
    for (const auto& r : rows) {
      Json q{{"publisher", node_of(r.publisher)},
             {"publisher_pid", r.publisher != nullptr ? r.publisher->pid : 0},
             {"publisher_port_id", r.queue->publisher_port_id},
             {"subscriber", node_of(r.subscriber)},
             {"subscriber_pid", r.subscriber != nullptr ? r.subscriber->pid : 0},
             {"subscriber_port_id", r.queue->subscriber_port_id},
             {"observer", observed(r)},
             {"ring", r.queue->ring_shm}};
      if (r.counters) {
        const auto& c = *r.counters;
        q.update(Json{{"published", c.published},
                      {"delivered", c.delivered},
                      {"taken", c.taken},
                      {"dropped", c.dropped},
                      {"overwritten", c.overwritten},
                      {"timed_out", c.timed_out},
                      {"backlog", c.backlog},
                      {"max_backlog", c.max_backlog}});
      }
      queues.push_back(std::move(q));
    }
    const Json out{{"name", t.name},
                   {"type", t.type_name},
                   {"declared", d.declared},
                   {"policy", policy_name(t.policy)},
                   {"capacity", t.capacity},
                   {"sample_size", t.sample_size},
                   {"block_timeout_ms", d.settings.block_timeout_ms},
                   {"max_publishers", d.settings.max_publishers},
                   {"max_subscribers", d.settings.max_subscribers},
                   {"max_loans", d.settings.max_loans},
                   {"max_held", d.settings.max_held},
                   {"history", d.settings.history},
                   {"publishers", ports_json(t.publishers)},
                   {"subscribers", ports_json(subscribers)},
                   {"observers", ports_json(observers)},
                   {"queues", std::move(queues)}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }

  std::string text;
  text += fmt::format("topic:    {}{}\n", t.name,
                      d.declared ? "" : " (not declared: takes the defaults)");
  const config::Type* type = config.schema.find(t.type_name);
  if (type != nullptr && type->kind == config::TypeKind::Struct) {
    text += fmt::format("type:     {} ({} bytes, align {}): {}\n", t.type_name, type->size,
                        type->align, field_list(*type));
  } else if (t.type_name == config::kBytesType) {
    text += fmt::format("type:     bytes (variable size)\n");
  } else {
    text +=
        fmt::format("type:     {} ({} bytes{})\n", t.type_name.empty() ? "(none yet)" : t.type_name,
                    t.sample_size, type != nullptr ? ", opaque" : "");
  }
  text += fmt::format("policy:   {}, capacity {}{}\n", policy_name(t.policy), t.capacity,
                      t.policy == discovery::Policy::Block
                          ? fmt::format(", block_timeout_ms {}", d.settings.block_timeout_ms)
                          : "");
  text += fmt::format(
      "limits:   max_publishers {}, max_subscribers {}, max_loans {}, max_held {}, history {}\n",
      d.settings.max_publishers, d.settings.max_subscribers, d.settings.max_loans,
      d.settings.max_held, d.settings.history);
  auto ports_text = [&](const char* title, const std::vector<discovery::PortInfo>& ports) {
    text += fmt::format("{} ({}):\n", title, ports.size());
    for (const auto& p : ports)
      text += fmt::format("  {}  pid {}  port {}\n", p.node, p.pid, p.port_id);
  };
  ports_text("publishers", t.publishers);
  ports_text("subscribers", subscribers);
  if (!observers.empty()) ports_text("observers (tools; never slow a publisher)", observers);
  text += fmt::format("queues ({}):\n", rows.size());
  std::fputs(text.c_str(), stdout);
  if (rows.empty()) return;
  Table table({"  PUBLISHER", "SUBSCRIBER", "PUBLISHED", "DELIVERED", "TAKEN", "DROPPED",
               "OVERWRITTEN", "TIMED_OUT", "BACKLOG", "MAX_BACKLOG"});
  for (const auto& r : rows) {
    std::vector<std::string> row{"  " + node_of(r.publisher),
                                 node_of(r.subscriber) + (observed(r) ? " (observer)" : "")};
    if (r.counters) {
      const auto& c = *r.counters;
      for (std::uint64_t v : {c.published, c.delivered, c.taken, c.dropped, c.overwritten,
                              c.timed_out, c.backlog, c.max_backlog}) {
        row.push_back(std::to_string(v));
      }
    } else {
      row.push_back("(gone)");
    }
    table.add(std::move(row));
  }
  std::fputs(table.render().c_str(), stdout);
}

}  // namespace

int run_topic_list(const TopicListOptions& o, const Context& context) {
  topic_list(context, o.json);
  return kExitOk;
}

int run_topic_info(const TopicInfoOptions& o, const Context& context) {
  topic_info(context, o.topic, o.json);
  return kExitOk;
}

}  // namespace ferry::cli
