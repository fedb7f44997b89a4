// ferry record [TOPIC...] [--all] -o FILE.mcap: records topics into an MCAP
// file (docs/record-replay.md) until Ctrl-C, --duration or --count, then writes the
// summary and reports per topic the messages recorded and the samples
// missed (sequence gaps), also kept in the file's "ferry.record" metadata.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "ferry/bag/bag_error.hpp"
#include "ferry/config/cdr.hpp"
#include "format.hpp"
#include "interrupt.hpp"
#include "recorder.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

using Clock = std::chrono::steady_clock;

// A chunk is written at least this often, so a recorder killed with -9
// loses at most this much of a slow topic.
constexpr std::chrono::seconds kFlushEvery{1};
// How often --all asks ferryd for topics that appeared.
constexpr std::chrono::milliseconds kPollTopicsEvery{500};
// The longest sleep between checks of Ctrl-C and the deadlines.
constexpr std::chrono::milliseconds kWaitStep{50};

// Whether a topic can be recorded yet: a topic named by no port and
// declared by no configuration has no type.
bool has_type(const discovery::TopicInfo& t) { return !t.type_name.empty(); }

std::string report(const RecordOptions& o, const Recorder& recorder, std::uint64_t file_size,
                   double seconds) {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  Table table({"TOPIC", "MESSAGES", "MISSED", "BYTES"});
  std::string gaps;
  for (const auto& t : recorder.topics()) {
    messages += t->messages;
    bytes += t->bytes;
    table.add({t->name, std::to_string(t->messages), std::to_string(t->gaps.missed()),
               human_bytes(static_cast<double>(t->bytes))});
    if (t->gaps.missed() != 0)
      gaps += fmt::format("missed {} sample(s) on '{}' ({})\n", t->gaps.missed(), t->name,
                          t->gaps.describe());
  }
  const double rate = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0.0;
  return fmt::format("recorded {} message(s) in {:.2f} s to {} ({}, {:.1f} MB/s of messages)\n{}{}",
                     messages, seconds, o.output, human_bytes(static_cast<double>(file_size)), rate,
                     table.render(), gaps);
}

void record(const Context& context, const RecordOptions& o) {
  if (o.topics.empty() && !o.all)
    throw Failure(kExitUsage, "ferry record needs at least one TOPIC or --all");
  const auto compression = bag::parse_compression_option(o.compression);
  if (!compression)
    throw Failure(kExitUsage, fmt::format("--compression '{}' is unknown; expected none, lz4 or "
                                          "zstd",
                                          o.compression));
  const std::string domain = context.domain();
  auto client = connect_daemon(context);
  const config::Config config = fetch_config(client);
  std::vector<discovery::TopicInfo> initial;
  for (const auto& name : o.topics) {
    discovery::TopicInfo t = find_topic(client, name);
    if (!has_type(t))
      throw Failure(kExitRuntime, fmt::format("topic '{}' has no type yet: no port and no "
                                              "configuration declared one",
                                              name));
    initial.push_back(std::move(t));
  }
  if (o.all)
    for (auto& t : list_topics(client))
      if (has_type(t)) initial.push_back(std::move(t));

  catch_interrupts();
  ferry::Node node{"ferry-record", ferry::NodeOptions{.domain = domain}};
  try {
    bag::McapWriter writer(o.output, bag::WriterOptions{.compression = *compression});
    Recorder recorder(node, config, writer, o.observe);
    for (const auto& t : initial)
      if (!recorder.has(t.name)) recorder.add(t);

    const auto start = Clock::now();
    const Clock::time_point end = o.duration > 0
                                      ? start + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(o.duration))
                                      : Clock::time_point::max();
    auto next_flush = start + kFlushEvery;
    auto next_poll = start + kPollTopicsEvery;
    std::uint64_t total = 0;
    while (!interrupted()) {
      const std::uint64_t limit = o.count != 0 ? o.count - total : UINT64_MAX;
      const std::uint64_t n = recorder.take(limit);
      total += n;
      if (o.count != 0 && total >= o.count) break;
      const auto now = Clock::now();
      if (now >= end) break;
      if (now >= next_flush) {
        recorder.flush();
        next_flush = now + kFlushEvery;
      }
      if (o.all && now >= next_poll) {
        for (const auto& t : list_topics(client))
          if (has_type(t) && !recorder.has(t.name)) recorder.add(t);
        next_poll = now + kPollTopicsEvery;
      }
      if (n == 0) {
        recorder.wait(std::min<Clock::duration>(kWaitStep, end - now));
      }
    }
    recorder.finish();  // what was taken is written
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    recorder.write_metadata();
    writer.close();
    std::fputs(report(o, recorder, writer.bytes_written(), seconds).c_str(), stdout);
    std::fflush(stdout);
  } catch (const bag::BagError& e) {
    throw Failure(kExitRuntime, e.what());
  } catch (const config::CdrError& e) {
    throw Failure(kExitRuntime, fmt::format("{}: {}", o.output, e.what()));
  }
}

}  // namespace

int run_record(const RecordOptions& o, const Context& context) {
  record(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
