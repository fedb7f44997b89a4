// ferry bag info FILE.mcap: what a recording holds (docs/record-replay.md): topics,
// types, message counts, start, end, duration, size; read from the file's
// summary, or from its complete records when the recorder did not finish.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ctime>
#include <memory>
#include <set>
#include <string>

#include "commands.hpp"
#include "ferry/bag/bag_error.hpp"
#include "ferry/bag/mcap_reader.hpp"
#include "format.hpp"
#include "sample_codec.hpp"
#include "table.hpp"

namespace ferry::cli {

namespace {

// "2026-12-01 01:59:00.123 UTC".
std::string utc_time(std::uint64_t ns) {
  const auto seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03} UTC", text, (ns / 1'000'000) % 1000);
}

struct TopicRow {
  std::string topic, type, ferry_type, encoding;
  std::uint64_t messages = 0;
};

std::vector<TopicRow> topic_rows(const bag::BagSummary& s) {
  std::vector<TopicRow> rows;
  for (const auto& [id, channel] : s.channels) {
    TopicRow row{channel.topic, "", channel.metadata_value("ferry_type"), channel.message_encoding};
    if (const auto schema = s.schemas.find(channel.schema_id); schema != s.schemas.end())
      row.type = schema->second.name;
    for (const auto& [cid, count] : s.statistics.channel_message_counts)
      if (cid == id) row.messages = count;
    rows.push_back(std::move(row));
  }
  return rows;
}

void bag_info(const std::string& file, bool json) {
  std::unique_ptr<bag::McapReader> reader;
  try {
    reader = std::make_unique<bag::McapReader>(file);
  } catch (const bag::BagError& e) {
    throw Failure(kExitRuntime, e.what());
  }
  const bag::BagSummary& s = reader->summary();
  const auto& stats = s.statistics;
  const bool any = stats.message_count > 0;
  const std::uint64_t duration = any ? stats.message_end_time - stats.message_start_time : 0;
  std::set<std::string> compressions;
  for (const auto& c : s.chunk_indexes)
    compressions.insert(c.compression.empty() ? "none" : c.compression);
  const auto rows = topic_rows(s);

  if (json) {
    Json topics = Json::array();
    for (const auto& r : rows)
      topics.push_back({{"topic", r.topic},
                        {"type", r.type},
                        {"ferry_type", r.ferry_type.empty() ? Json(nullptr) : Json(r.ferry_type)},
                        {"message_encoding", r.encoding},
                        {"messages", r.messages}});
    const Json out = {{"file", file},
                      {"size", s.file_size},
                      {"messages", stats.message_count},
                      {"start_ns", any ? Json(stats.message_start_time) : Json(nullptr)},
                      {"end_ns", any ? Json(stats.message_end_time) : Json(nullptr)},
                      {"duration_ns", duration},
                      {"chunks", stats.chunk_count},
                      {"compression", compressions},
                      {"complete", s.has_summary},
                      {"truncated_at", s.truncated_at ? Json(*s.truncated_at) : Json(nullptr)},
                      {"topics", topics}};
    std::fputs((out.dump(2) + "\n").c_str(), stdout);
  } else {
    std::string text;
    text += fmt::format("File:      {}\n", file);
    text += fmt::format("Size:      {}\n", human_bytes(static_cast<double>(s.file_size)));
    text += fmt::format("Messages:  {}\n", stats.message_count);
    if (any) {
      text += fmt::format("Start:     {}\n", utc_time(stats.message_start_time));
      text += fmt::format("End:       {}\n", utc_time(stats.message_end_time));
      text += fmt::format("Duration:  {}\n", human_millis(duration / 1'000'000));
    }
    text += fmt::format(
        "Chunks:    {}{}\n", stats.chunk_count,
        compressions.empty() ? "" : fmt::format(" ({})", fmt::join(compressions, ", ")));
    Table table({"TOPIC", "TYPE", "FERRY TYPE", "MESSAGES"});
    for (const auto& r : rows)
      table.add(
          {r.topic, r.type, r.ferry_type.empty() ? "-" : r.ferry_type, std::to_string(r.messages)});
    text += table.render();
    std::fputs(text.c_str(), stdout);
  }
  std::fflush(stdout);
  if (s.truncated_at)
    throw Failure(kExitRuntime,
                  fmt::format("{}: at offset {}: the file is cut short (its recorder did not "
                              "finish); shown above is what its complete chunks hold",
                              file, *s.truncated_at));
}

}  // namespace

int run_bag_info(const BagInfoOptions& o, const Context& /*context*/) {
  bag_info(o.file, o.json);
  return kExitOk;
}

}  // namespace ferry::cli
