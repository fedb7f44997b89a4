// ferry topic pub TOPIC VALUE: publishes a sample built from a YAML/JSON
// flow map, checked against the topic's type before anything is sent.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>
#include <thread>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "interrupt.hpp"
#include "sample_codec.hpp"
#include "topic_type.hpp"

namespace ferry::cli {

namespace {

// How long the first sample waits for a subscriber to be matched.
constexpr std::chrono::seconds kWaitForSubscribers{2};
constexpr std::chrono::milliseconds kPollStep{10};

std::vector<std::byte> build_sample(const config::Config& config, const discovery::TopicInfo& info,
                                    const std::string& text) {
  const TopicType type = resolve_type(config, info);
  if (type.bytes) {
    throw Failure(kExitUsage,
                  fmt::format("topic '{}' carries bytes; ferry topic pub publishes typed "
                              "samples only",
                              info.name));
  }
  auto value = parse_value(text);
  if (!value) throw Failure(kExitUsage, value.error());
  if (type.type == nullptr) {
    // An undeclared topic typed by a C++ program: no fields to fill.
    if (!value->IsNull() && !(value->IsMap() && value->size() == 0)) {
      throw Failure(kExitUsage, fmt::format("type '{}' of topic '{}' is not declared in the "
                                            "configuration, so its fields are unknown; only {{}} "
                                            "(all zeros) can be published",
                                            info.type_name, info.name));
    }
    return std::vector<std::byte>(info.sample_size, std::byte{0});
  }
  auto bytes = encode_sample(config.schema, *type.type, *value);
  if (!bytes) throw Failure(kExitUsage, bytes.error());
  return std::move(*bytes);
}

// Sleeps until `deadline` in short steps; false when interrupted.
bool sleep_until(std::chrono::steady_clock::time_point deadline) {
  while (!interrupted()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(deadline - now, kPollStep));
  }
  return false;
}

// What to wait for before the first sample: subscribers and observers (an
// observer, e.g. topic echo, is worth waiting for too, though its queue is
// not counted in the results), and at least `any` of the two together.
struct Readers {
  std::uint32_t subscribers = 0;
  std::uint32_t observers = 0;
  std::uint32_t any = 0;
  [[nodiscard]] bool there(const RawPublisher& p) const noexcept {
    const std::uint32_t subs = p.subscriber_count();
    const std::uint32_t obs = p.observer_count();
    return subs >= subscribers && obs >= observers && subs + obs >= any;
  }
};

// --wait-subscribers N, or every port ferryd lists on the topic now that
// our publisher exists (each was matched with it; its queue is attached a
// moment later), and at least one: a subscriber may be about to come.
Readers readers_to_wait_for(discovery::Client& client, const PubOptions& o) {
  if (o.wait_subscribers) return Readers{*o.wait_subscribers, 0, 0};
  Readers readers{0, 0, 1};
  for (const auto& port : find_topic(client, o.topic).subscribers)
    ++(port.observer ? readers.observers : readers.subscribers);
  return readers;
}

// Waits up to kWaitForSubscribers (or Ctrl-C) for `readers`' queues.
void wait_for_readers(const RawPublisher& publisher, const Readers& readers) {
  const auto wait_end = std::chrono::steady_clock::now() + kWaitForSubscribers;
  while (!readers.there(publisher) && !interrupted()) {
    const auto left = wait_end - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, kPollStep));
  }
}

void pub(const Context& context, const PubOptions& o) {
  const std::string domain = context.domain();
  auto client = connect_daemon(context);
  const discovery::TopicInfo info = find_topic(client, o.topic);
  const config::Config config = fetch_config(client);
  const std::vector<std::byte> sample = build_sample(config, info, o.value);

  catch_interrupts();
  ferry::Node node{"ferry-pub", ferry::NodeOptions{.domain = domain}};
  auto publisher = node.raw_publisher(o.topic);
  if (publisher.sample_size() != sample.size()) {
    throw Failure(kExitRuntime,
                  fmt::format("topic '{}' takes {}-byte samples but its declared type "
                              "'{}' is {} bytes",
                              o.topic, publisher.sample_size(), info.type_name, sample.size()));
  }
  wait_for_readers(publisher, readers_to_wait_for(client, o));

  const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / o.rate));
  auto next = std::chrono::steady_clock::now();
  std::uint64_t sent = 0;
  struct {
    std::uint64_t delivered = 0, dropped = 0, overwritten = 0, timed_out = 0;
  } totals;
  // The most observers seen while publishing: one that took its sample and
  // left (topic echo --count 1) is still one the samples went to.
  std::uint32_t observers = 0;
  while (!interrupted() && (o.count == 0 || sent < o.count)) {
    observers = std::max(observers, publisher.observer_count());
    const PublishResult r = publisher.publish(sample);
    totals.delivered += r.delivered;
    totals.dropped += r.dropped;
    totals.overwritten += r.overwritten;
    totals.timed_out += r.timed_out;
    ++sent;
    if (o.count != 0 && sent == o.count) break;
    next += period;
    if (!sleep_until(next)) break;
  }
  std::fputs(
      fmt::format(
          "published {} sample(s) on '{}': {} delivered, {} dropped, {} overwritten, "
          "{} timed out (summed over subscriber queues{})\n",
          sent, o.topic, totals.delivered, totals.dropped, totals.overwritten, totals.timed_out,
          observers == 0 ? std::string() : fmt::format("; {} observer(s) not counted", observers))
          .c_str(),
      stdout);
}

}  // namespace

int run_pub(const PubOptions& o, const Context& context) {
  pub(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
