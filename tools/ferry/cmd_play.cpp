// ferry play FILE.mcap: publishes a recording again (docs/record-replay.md), in the
// recorded order with the recorded spacing scaled by --rate, after checking
// every channel's type against the running domain.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "channel_layout.hpp"
#include "commands.hpp"
#include "daemon_query.hpp"
#include "ferry/bag/bag_error.hpp"
#include "ferry/bag/mcap_reader.hpp"
#include "ferry/config/cdr.hpp"
#include "format.hpp"
#include "interrupt.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

using Clock = std::chrono::steady_clock;

// How long playing waits for each topic to have a subscriber before the
// first message.
constexpr std::chrono::seconds kWaitForSubscribers{2};
// The longest sleep between checks of Ctrl-C.
constexpr std::chrono::milliseconds kSleepStep{100};

struct PlayedTopic {
  std::string name;
  ChannelLayout layout;
  std::optional<RawPublisher> raw;        // Declared and Undeclared types
  std::optional<Publisher<Bytes>> bytes;  // bytes topics
  std::vector<std::byte> sample;          // decoding buffer of sample_size bytes
  std::uint64_t messages = 0;
  std::uint64_t delivered = 0, dropped = 0, overwritten = 0, timed_out = 0, failed = 0;

  [[nodiscard]] std::uint32_t subscriber_count() const {
    return raw ? raw->subscriber_count() : bytes->subscriber_count();
  }
};

// Sleeps until `deadline` (an absolute time, so that spacing never drifts);
// false when interrupted.
bool sleep_until(Clock::time_point deadline) {
  while (!interrupted()) {
    const auto now = Clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_until(std::min(deadline, now + kSleepStep));
  }
  return false;
}

// Checks the channel against the domain: the same ferry type name and the
// same ros2msg definition (a type whose fields changed under the same name
// does not match either).
ChannelLayout matching_layout(const PlayOptions& o, const bag::BagSummary& summary,
                              const bag::ChannelRecord& channel, discovery::Client& client,
                              const config::Config& config, const std::string& domain) {
  const std::string recorded = channel.metadata_value("ferry_type");
  if (recorded.empty())
    throw Failure(kExitRuntime, fmt::format("{}: channel '{}' has no ferry_type metadata (it was "
                                            "not written by ferry record), so its ferry type is "
                                            "unknown",
                                            o.file, channel.topic));
  const discovery::TopicInfo info = find_topic(client, channel.topic);
  if (info.type_name != recorded)
    throw Failure(kExitRuntime,
                  fmt::format("{}: topic '{}' was recorded with type '{}' but domain '{}' has it "
                              "with type '{}'",
                              o.file, channel.topic, recorded, domain,
                              info.type_name.empty() ? "(none yet)" : info.type_name));
  ChannelLayout layout = channel_layout(config, info);
  const auto schema = summary.schemas.find(channel.schema_id);
  if (schema != summary.schemas.end()) {
    const std::string text(reinterpret_cast<const char*>(schema->second.data.data()),
                           schema->second.data.size());
    if (text != layout.definition)
      throw Failure(kExitRuntime,
                    fmt::format("{}: topic '{}' has type '{}' in the file and in domain '{}', but "
                                "its fields differ (recorded schema '{}')",
                                o.file, channel.topic, recorded, domain, schema->second.name));
  }
  return layout;
}

void count(PlayedTopic& t, const PublishResult& r) {
  ++t.messages;
  t.delivered += r.delivered;
  t.dropped += r.dropped;
  t.overwritten += r.overwritten;
  t.timed_out += r.timed_out;
  if (r.error) ++t.failed;
}

void play(const Context& context, const PlayOptions& o) {
  std::unique_ptr<bag::McapReader> reader;
  try {
    reader = std::make_unique<bag::McapReader>(o.file);
  } catch (const bag::BagError& e) {
    throw Failure(kExitRuntime, e.what());
  }
  const bag::BagSummary& summary = reader->summary();
  try {
    // Every CRC first, so that a damaged file is refused before anything
    // is published. A file cut short has none to check: its complete
    // chunks are played.
    if (summary.has_summary) reader->verify();
  } catch (const bag::BagError& e) {
    throw Failure(kExitRuntime, e.what());
  }
  if (summary.truncated_at)
    std::fputs(fmt::format("ferry: {}: at offset {}: the file is cut short (its recorder did not "
                           "finish); playing its complete chunks\n",
                           o.file, *summary.truncated_at)
                   .c_str(),
               stderr);
  const std::set<std::string> wanted(o.topics.begin(), o.topics.end());
  for (const auto& name : wanted) {
    const bool present = std::any_of(summary.channels.begin(), summary.channels.end(),
                                     [&](const auto& c) { return c.second.topic == name; });
    if (!present)
      throw Failure(kExitUsage,
                    fmt::format("--topics names '{}', which {} has no channel for", name, o.file));
  }

  const std::string domain = context.domain();
  auto client = connect_daemon(context);
  const config::Config config = fetch_config(client);
  catch_interrupts();
  ferry::Node node{"ferry-play", ferry::NodeOptions{.domain = domain}};
  std::map<std::uint16_t, std::unique_ptr<PlayedTopic>> topics;  // by channel id
  for (const auto& [id, channel] : summary.channels) {
    if (!wanted.empty() && !wanted.contains(channel.topic)) continue;
    auto t = std::make_unique<PlayedTopic>();
    t->name = channel.topic;
    t->layout = matching_layout(o, summary, channel, client, config, domain);
    if (t->layout.kind == ChannelLayout::Kind::Bytes) {
      t->bytes.emplace(node.publisher<Bytes>(channel.topic));
    } else {
      t->raw.emplace(node.raw_publisher(channel.topic));
      t->sample.resize(t->layout.sample_size);
    }
    topics.emplace(id, std::move(t));
  }

  const auto give_up = Clock::now() + kWaitForSubscribers;
  while (!interrupted() && Clock::now() < give_up &&
         std::any_of(topics.begin(), topics.end(),
                     [](const auto& t) { return t.second->subscriber_count() == 0; }))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  // The recording's clock starts at its first message (plus --start-offset).
  std::optional<std::uint64_t> first;
  if (summary.statistics.message_count != 0) first = summary.statistics.message_start_time;
  const auto offset_ns = static_cast<std::uint64_t>(o.start_offset * 1e9);
  std::uint64_t played_total = 0;
  try {
    const auto max_gap_ns = static_cast<std::uint64_t>(o.max_gap * 1e9);
    do {
      const auto origin = Clock::now();
      std::uint64_t played = 0;
      std::uint64_t index = 0;
      // Gaps past --max-gap are cut: the time they lose is `skipped`, and
      // every later message comes that much earlier.
      std::optional<std::uint64_t> previous;
      std::uint64_t skipped = 0;
      reader->for_each_message(
          [&](const bag::MessageView& m) {
            ++index;
            const auto it = topics.find(m.header.channel_id);
            if (it == topics.end()) return true;
            if (!first) first = m.header.log_time;
            const std::uint64_t start = *first + offset_ns;
            if (m.header.log_time < start) return true;
            if (previous && max_gap_ns > 0 && m.header.log_time > *previous &&
                m.header.log_time - *previous > max_gap_ns) {
              const std::uint64_t gap = m.header.log_time - *previous;
              skipped += gap - max_gap_ns;
              std::fprintf(stderr,
                           "ferry play: message %llu (topic '%s') was logged %.1f s after the one "
                           "before; waiting %.1f s instead (--max-gap)\n",
                           static_cast<unsigned long long>(index),
                           printable(it->second->name).c_str(), static_cast<double>(gap) / 1e9,
                           o.max_gap);
            }
            previous = std::max(previous.value_or(0), m.header.log_time);
            const std::uint64_t elapsed = m.header.log_time - start;
            const auto due =
                origin +
                std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double, std::nano>(
                        static_cast<double>(elapsed > skipped ? elapsed - skipped : 0) / o.rate));
            if (!sleep_until(due)) return false;
            PlayedTopic& t = *it->second;
            std::span<const std::byte> sample;
            try {
              sample = decode(config.schema, t.layout, m.data, t.sample);
            } catch (const config::CdrError& e) {
              throw Failure(kExitRuntime, fmt::format("{}: message {} (topic '{}'): {}", o.file,
                                                      index, t.name, e.what()));
            }
            count(t, t.raw ? t.raw->publish(sample) : t.bytes->publish(sample));
            ++played;
            return true;
          },
          !summary.has_summary);  // verify() checked the CRCs of a complete file
      played_total += played;
      if (played == 0) break;  // nothing at or after --start-offset: looping would spin
    } while (o.loop && !interrupted());
  } catch (const bag::BagError& e) {
    throw Failure(kExitRuntime, e.what());
  }

  Table table({"TOPIC", "MESSAGES", "DELIVERED", "DROPPED", "OVERWRITTEN", "TIMED OUT", "FAILED"});
  for (const auto& [id, t] : topics)
    table.add({t->name, std::to_string(t->messages), std::to_string(t->delivered),
               std::to_string(t->dropped), std::to_string(t->overwritten),
               std::to_string(t->timed_out), std::to_string(t->failed)});
  std::fputs(fmt::format("played {} message(s) from {} (publish results summed over subscriber "
                         "queues)\n{}",
                         played_total, o.file, table.render())
                 .c_str(),
             stdout);
  std::fflush(stdout);
}

}  // namespace

int run_play(const PlayOptions& o, const Context& context) {
  play(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
