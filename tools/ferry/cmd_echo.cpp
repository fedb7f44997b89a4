// ferry topic echo TOPIC: subscribes and prints each sample decoded with the
// type schema ferryd serves: YAML-like documents separated by '---', or one
// JSON object per line.
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

struct EchoOptions {
  std::string topic;
  std::uint64_t count = 0;  // 0: until interrupted
  bool json = false;
};

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
    const Json value = type.type != nullptr
                           ? decode_sample(config.schema, *type.type, sample->bytes())
                           : decode_opaque(sample->bytes());
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

void add_echo_command(CLI::App& topic, Context& context) {
  auto* cmd =
      topic.add_subcommand("echo", "Print the samples published on a topic, decoded with its type");
  auto o = std::make_shared<EchoOptions>();
  cmd->add_option("TOPIC", o->topic, "The topic")->required();
  cmd->add_option("--count,-n", o->count, "Stop after N samples (default: until Ctrl-C)");
  cmd->add_flag("--json", o->json, "One JSON object per line, keyed by field name");
  cmd->footer(
      "Samples are decoded with the YAML types ferryd loaded: nested types, arrays, char[N] as a\n"
      "string; opaque types and bytes topics as their size and a hex prefix.\n"
      "Examples:\n  ferry topic echo robot/pose\n  ferry topic echo robot/pose --count 1 --json");
  cmd->callback([&context, o] { echo(context, *o); });
}

}  // namespace ferry::cli
