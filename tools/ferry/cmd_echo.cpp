// ferry topic echo TOPIC: subscribes and prints each sample decoded with the
// type schema ferryd serves: YAML-like documents separated by '---', or one
// JSON object per line. The type's fields are the top-level keys; the
// sample's metadata follows them under `_info` (sequence, publisher_id,
// publish_time_ns, age_ms: how long ago it was published when taken).
#include <cmath>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "interrupt.hpp"
#include "sample_codec.hpp"
#include "topic_type.hpp"

namespace ferry::cli {

namespace {

constexpr const char* kInfoKey = "_info";

// The sample's metadata, appended after its fields (unless the type has a
// field of that name: the fields come first).
void add_info(Json& value, const ferry::SampleInfo& info, std::uint64_t taken_ns) {
  if (!value.is_object() || value.contains(kInfoKey)) return;
  const double age_ms = static_cast<double>(static_cast<std::int64_t>(taken_ns) -
                                            static_cast<std::int64_t>(info.publish_time_ns)) /
                        1e6;
  value[kInfoKey] = Json{{"sequence", info.sequence},
                         {"publisher_id", info.publisher_id},
                         {"publish_time_ns", info.publish_time_ns},
                         {"age_ms", std::round(age_ms * 1000) / 1000}};
}

void echo(const Context& context, const EchoOptions& o) {
  const std::string domain = context.domain();
  auto client = connect_daemon(context);
  const discovery::TopicInfo info = find_topic(client, o.topic);
  const config::Config config = fetch_config(client);
  const TopicType type = resolve_type(config, info);

  catch_interrupts();
  ferry::Node node{"ferry-echo", ferry::NodeOptions{.domain = domain}};
  // An observer: inspecting never changes how the topic runs (SubscriberOptions).
  auto sub = node.raw_subscriber(o.topic, ferry::SubscriberOptions{.observer = true});
  std::uint64_t shown = 0;
  while (!interrupted() && (o.count == 0 || shown < o.count)) {
    auto sample = sub.take(std::chrono::milliseconds(100));
    if (!sample) continue;
    const std::uint64_t taken_ns = ferry::detail::realtime_ns();
    Json value = type.type != nullptr
                     ? decode_sample(config.schema, *type.type, sample->bytes(), o.full)
                     : decode_opaque(sample->bytes());
    add_info(value, sample->info(), taken_ns);
    if (o.json) {
      std::printf("%s\n", to_json_line(value).c_str());
    } else {
      std::printf("%s---\n", to_yaml_text(value).c_str());
    }
    std::fflush(stdout);
    ++shown;
  }
}

}  // namespace

int run_echo(const EchoOptions& o, const Context& context) {
  echo(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
