// ferry record and ferry play end to end (docs/record-replay.md), with a real ferryd
// and publishers in their own processes: three topics recorded while they
// publish, bag info's counts, the file's bytes, play into a fresh domain
// (every sample, in order, identical, spaced as recorded), Ctrl-C and
// kill -9 endings, type mismatches and bad files.

#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bag_test_util.hpp"
#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "ferry/bag/mcap_reader.hpp"
#include "json_text.hpp"
#include "record_test_util.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using namespace record_test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint32_t kAll = 50;
constexpr std::uint32_t kFrames = 30;  // ~1 s at 30 Hz
constexpr std::uint32_t kLogs = 40;

template <class P>
void wait_for_subscriber(P& pub) {
  (void)pub.wait_for_subscribers(1, std::chrono::seconds(5));
}

template <class T>
std::vector<std::byte> bytes_of(const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  return {p, p + sizeof value};
}

Child all_publisher() {
  return Child([] {
    ferry::Node node{"all-pub"};
    auto pub = node.publisher<All>("all");
    wait_for_subscriber(pub);
    for (std::uint32_t i = 0; i < kAll; ++i) {
      if (pub.publish(make_all(i)).delivered != 1) return 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
    return 0;
  });
}

// Loaned frames at 30 Hz, as the camera example publishes them.
Child frame_publisher() {
  return Child([] {
    ferry::Node node{"camera"};
    auto pub = node.publisher<Frame>("camera/frames");
    wait_for_subscriber(pub);
    auto next = Clock::now();
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      auto loan = pub.loan();
      if (!loan) return 2;
      fill_frame(**loan, i);
      if (pub.publish(std::move(*loan)).delivered != 1) return 1;
      next += std::chrono::microseconds(33333);
      std::this_thread::sleep_until(next);
    }
    return 0;
  });
}

Child log_publisher() {
  return Child([] {
    ferry::Node node{"logger"};
    auto pub = node.publisher<ferry::Bytes>("logs/text");
    wait_for_subscriber(pub);
    for (std::uint32_t i = 0; i < kLogs; ++i) {
      const std::string line = log_line(i);
      if (pub.publish(std::as_bytes(std::span(line))).delivered != 1) return 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  });
}

// Waits until ferryd lists a subscriber named `node` on `topic`.
bool subscribed(const TestDomain& domain, const std::string& topic) {
  const auto give_up = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < give_up) {
    const auto r = run_program(domain, {bin_path("ferry"), "topic", "info", topic, "--json"});
    if (r.exit_code == 0 && !ferry::test::parse_json(r.out)["subscribers"].empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// What the checker of a played recording received.
struct Received {
  std::vector<std::vector<std::byte>> all, logs;
  std::vector<bool> frames_ok;
  std::vector<Clock::time_point> frame_times;
};

}  // namespace

TEST_CASE("ferry record: three topics while they publish; play gives every sample back") {
  ServedConfig served(config_yaml());
  bag_test::TempDir dir("record");
  const auto file = dir / "run.mcap";
  const std::uint32_t total = kAll + kFrames + kLogs;

  Background recorder(served.domain,
                      {bin_path("ferry"), "record", "all", "camera/frames", "logs/text", "-o",
                       file.string(), "--count", std::to_string(total)});
  REQUIRE(subscribed(served.domain, "logs/text"));
  Child all = all_publisher();
  Child frames = frame_publisher();
  Child logs = log_publisher();
  CHECK(all.wait() == 0);
  CHECK(frames.wait() == 0);
  CHECK(logs.wait() == 0);
  INFO("ferry record: " << recorder.out() << recorder.err());
  REQUIRE(recorder.wait(std::chrono::seconds(10)) == 0);
  CHECK(recorder.out().find("recorded " + std::to_string(total) + " message(s)") !=
        std::string::npos);

  // bag info: the counts published.
  const auto info =
      run_program(served.domain, {bin_path("ferry"), "bag", "info", file.string(), "--json"});
  REQUIRE(info.exit_code == 0);
  const auto j = ferry::test::parse_json(info.out);
  CHECK(j["messages"] == total);
  CHECK(j["complete"] == true);
  std::map<std::string, std::uint64_t> counts;
  for (const auto& t : j["topics"]) counts[t["topic"]] = t["messages"];
  CHECK(counts == std::map<std::string, std::uint64_t>{
                      {"all", kAll}, {"camera/frames", kFrames}, {"logs/text", kLogs}});

  // The file: channel metadata, CDR of each sample, recorded log times.
  ferry::bag::McapReader reader(file);
  reader.verify();
  for (const auto& [id, c] : reader.summary().channels) {
    CAPTURE(c.topic);
    const ferry::bag::StringMap expected_keys = {
        {"capacity", c.topic == "all"             ? "64"
                     : c.topic == "camera/frames" ? "4"
                                                  : "16"},
        {"ferry_type", c.topic == "all"             ? "All"
                       : c.topic == "camera/frames" ? "Frame"
                                                    : "bytes"},
        {"policy", "block"}};
    CHECK(c.metadata == expected_keys);
  }
  std::vector<std::uint64_t> frame_log_times;
  std::map<std::string, std::uint32_t> seen;
  reader.for_each_message([&](const ferry::bag::MessageView& m) {
    const std::uint32_t i = seen[m.channel->topic]++;
    if (m.channel->topic == "camera/frames") {
      frame_log_times.push_back(m.header.log_time);
      CHECK(m.data.size() == 4 + sizeof(Frame) - 0);  // no padding in Frame
    } else if (m.channel->topic == "logs/text") {
      const std::string line = log_line(i);
      REQUIRE(m.data.size() == 8 + line.size());
      CHECK(std::memcmp(m.data.data() + 8, line.data(), line.size()) == 0);
    }
    CHECK(m.header.publish_time != 0);
    return true;
  });
  REQUIRE(frame_log_times.size() == kFrames);

  // Play into a fresh domain: every sample, in order, the same bytes.
  TestDomain fresh;
  Daemon fresh_daemon(fresh, config_yaml());
  ferry::test::use_domain_env(fresh);
  Received got;
  {
    ferry::Node node{"checker"};
    auto all_sub = node.subscriber<All>("all");
    auto frame_sub = node.subscriber<Frame>("camera/frames");
    auto log_sub = node.subscriber<ferry::Bytes>("logs/text");
    // Built before playing, so that checking a frame is one memcmp.
    std::vector<std::unique_ptr<Frame>> expected_frames;
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      expected_frames.push_back(std::make_unique<Frame>());
      std::memset(expected_frames.back().get(), 0, sizeof(Frame));
      fill_frame(*expected_frames.back(), i);
    }
    Background player(fresh, {bin_path("ferry"), "play", file.string()});
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    while ((got.all.size() < kAll || got.frames_ok.size() < kFrames || got.logs.size() < kLogs) &&
           Clock::now() < give_up) {
      bool any = false;
      if (auto s = all_sub.take()) {
        got.all.push_back(bytes_of(**s));
        any = true;
      }
      if (auto s = frame_sub.take()) {
        got.frame_times.push_back(Clock::now());
        const std::size_t i = got.frames_ok.size();
        got.frames_ok.push_back(
            i < kFrames && std::memcmp(s->get(), expected_frames[i].get(), sizeof(Frame)) == 0);
        any = true;
      }
      if (auto s = log_sub.take()) {
        got.logs.emplace_back((*s)->data(), (*s)->data() + (*s)->size());
        any = true;
      }
      if (!any) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    INFO("ferry play: " << player.out() << player.err());
    REQUIRE(player.wait(std::chrono::seconds(10)) == 0);
    CHECK(player.out().find("played " + std::to_string(total) + " message(s)") !=
          std::string::npos);
  }
  REQUIRE(got.all.size() == kAll);
  REQUIRE(got.frames_ok.size() == kFrames);
  REQUIRE(got.logs.size() == kLogs);
  for (std::uint32_t i = 0; i < kAll; ++i) {
    CAPTURE(i);
    CHECK(got.all[i] == bytes_of(make_all(i)));
  }
  CHECK(std::count(got.frames_ok.begin(), got.frames_ok.end(), true) == kFrames);
  for (std::uint32_t i = 0; i < kLogs; ++i) {
    const std::string line = log_line(i);
    CHECK(got.logs[i] ==
          std::vector<std::byte>(reinterpret_cast<const std::byte*>(line.data()),
                                 reinterpret_cast<const std::byte*>(line.data()) + line.size()));
  }

  // Spacing at --rate 1: the frames' span as recorded, within 10%.
  const double recorded_span =
      static_cast<double>(frame_log_times.back() - frame_log_times[0]) / 1e6;
  const double played_span =
      std::chrono::duration<double, std::milli>(got.frame_times.back() - got.frame_times[0])
          .count();
  CAPTURE(recorded_span);
  CAPTURE(played_span);
  CHECK(std::abs(played_span - recorded_span) <= 0.1 * recorded_span);
  // Each frame within 10% of the span of its recorded time: no drift.
  double worst = 0;
  for (std::size_t i = 1; i < kFrames; ++i) {
    const double due = static_cast<double>(frame_log_times[i] - frame_log_times[0]) / 1e6;
    const double came =
        std::chrono::duration<double, std::milli>(got.frame_times[i] - got.frame_times[0]).count();
    worst = std::max(worst, std::abs(came - due));
  }
  CAPTURE(worst);
  CHECK(worst <= 0.1 * recorded_span);
}

namespace {

// Ticks at `hz` until killed, waiting for a subscriber first.
Child tick_publisher(double hz) {
  return Child([hz] {
    ferry::Node node{"ticker"};
    auto pub = node.publisher<Tick>("ticks");
    wait_for_subscriber(pub);
    const auto period =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / hz));
    auto next = Clock::now();
    for (std::uint64_t i = 0; i < 1'000'000; ++i) {
      Tick t{};
      t.n = i;
      (void)pub.publish(t);
      next += period;
      std::this_thread::sleep_until(next);
    }
    return 0;
  });
}

}  // namespace

TEST_CASE("ferry record: Ctrl-C ends with a complete file; kill -9 leaves its complete chunks") {
  ServedConfig served(config_yaml());
  bag_test::TempDir dir("record-end");
  Child ticks = tick_publisher(200);

  for (const int sig : {SIGINT, SIGTERM, SIGKILL}) {
    CAPTURE(sig);
    const auto file = dir / ("ticks-" + std::to_string(sig) + ".mcap");
    Background recorder(served.domain, {bin_path("ferry"), "record", "ticks", "-o", file.string(),
                                        "--compression", "lz4"});
    REQUIRE(subscribed(served.domain, "ticks"));
    // Until the file holds a complete chunk (one a second), so that kill -9
    // leaves one; the reader reads a file being written as one cut short.
    const auto give_up = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < give_up &&
           ferry::bag::McapReader(file).summary().statistics.message_count == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    recorder.signal(sig);
    const int code = recorder.wait(std::chrono::seconds(5));
    ferry::bag::McapReader reader(file);
    std::uint64_t n = 0, last = 0;
    bool in_order = true;
    reader.for_each_message([&](const ferry::bag::MessageView& m) {
      Tick t{};
      REQUIRE(m.data.size() == 4 + sizeof(Tick));
      std::memcpy(&t, m.data.data() + 4, sizeof t);
      // drop_oldest: a recorder short of CPU misses some (gaps), never reorders.
      if (n != 0 && t.n <= last) in_order = false;
      last = t.n;
      ++n;
      return true;
    });
    CHECK(in_order);
    CHECK(n >= 1);
    if (sig == SIGKILL) {
      CHECK(code == 128 + SIGKILL);
      CHECK_FALSE(reader.summary().has_summary);
      // Chunks are written whole, so the file usually ends at a record's
      // end: no summary, nothing cut short.
      const auto info =
          run_program(served.domain, {bin_path("ferry"), "bag", "info", file.string(), "--json"});
      CHECK(info.exit_code == (reader.summary().truncated_at ? 1 : 0));
      CHECK(ferry::test::parse_json(info.out)["complete"] == false);
      CHECK(ferry::test::parse_json(info.out)["messages"] == n);
    } else {
      INFO(recorder.err());
      CHECK(code == 0);
      CHECK(reader.summary().has_summary);
      CHECK(reader.summary().statistics.message_count == n);
      reader.verify();
      const auto metadata = reader.metadata();
      REQUIRE(metadata.size() == 1);
      CHECK(metadata[0].name == "ferry.record");
      CHECK(recorder.out().find("recorded " + std::to_string(n) + " message(s)") !=
            std::string::npos);
    }
  }
}

TEST_CASE("ferry play: a type that does not match the domain is refused, naming both") {
  bag_test::TempDir dir("play-type");
  // bag_test's recording: topic "pose" of geo/Pose (u8 id, f64 x, bool ok), "log" of bytes.
  const auto file = dir / "rec.mcap";
  bag_test::write_recording(file, {}, 3);
  const auto play = [&](const TestDomain& domain) {
    return run_program(domain, {bin_path("ferry"), "play", file.string()});
  };
  {
    TestDomain domain;
    Daemon daemon(domain, R"(
types:
  Other:
    fields:
      - { name: v, type: f64 }
topics:
  - { name: pose, type: Other }
  - { name: log, type: bytes, max_size: 1KiB }
)");
    const auto r = play(domain);
    CHECK(r.exit_code == 1);
    CHECK(r.err == "ferry: " + file.string() + ": topic 'pose' was recorded with type 'geo/Pose' " +
                       "but domain '" + domain.name() + "' has it with type 'Other'\n");
  }
  {
    TestDomain domain;
    Daemon daemon(domain, R"(
types:
  geo/Pose:
    fields:
      - { name: id, type: u32 }
      - { name: x, type: f64 }
topics:
  - { name: pose, type: geo/Pose }
  - { name: log, type: bytes, max_size: 1KiB }
)");
    const auto r = play(domain);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("topic 'pose' has type 'geo/Pose' in the file and in domain") !=
          std::string::npos);
    CHECK(r.err.find("its fields differ") != std::string::npos);
  }
}

TEST_CASE("ferry play: bad files get one sentence naming the file and the offset; usage errors") {
  TestDomain domain;
  Daemon daemon(domain, config_yaml());
  bag_test::TempDir dir("play-bad");
  const auto good = dir / "good.mcap";
  bag_test::write_recording(good, {.compression = ferry::bag::Compression::Lz4}, 20);
  const auto bytes = bag_test::read_all(good);
  const auto play = [&](const std::filesystem::path& f, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {bin_path("ferry"), "play", f.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_program(domain, argv);
  };

  const auto text = dir / "text.mcap";
  bag_test::write_all(text, std::vector<std::byte>(40, std::byte{'x'}));
  auto r = play(text);
  CHECK(r.exit_code == 1);
  CHECK(r.err == "ferry: " + text.string() +
                     ": at offset 0: is not an MCAP file: no MCAP magic at the start\n");

  // A byte of the first chunk's records flipped: its CRC no longer matches.
  const auto chunk_at = static_cast<std::size_t>(
      ferry::bag::McapReader(good).summary().chunk_indexes.at(0).chunk_start_offset);
  auto damaged = bytes;
  damaged[chunk_at + 9 + 40 + 4 + 10] ^= std::byte{0x01};  // inside the lz4 records
  const auto crc = dir / "crc.mcap";
  bag_test::write_all(crc, damaged);
  r = play(crc);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ferry: " + crc.string() + ": at offset ") == 0);

  // An unknown compression: "lz4" renamed "lz5".
  auto renamed = bytes;
  const std::string lz4 = "lz4";
  const auto at = std::search(renamed.begin() + static_cast<std::ptrdiff_t>(chunk_at),
                              renamed.end(), reinterpret_cast<const std::byte*>(lz4.data()),
                              reinterpret_cast<const std::byte*>(lz4.data()) + 3);
  REQUIRE(at != renamed.end());
  at[2] = std::byte{'5'};
  const auto lz5 = dir / "lz5.mcap";
  bag_test::write_all(lz5, renamed);
  r = play(lz5);
  CHECK(r.exit_code == 1);
  CHECK(r.err == "ferry: " + lz5.string() + ": at offset " + std::to_string(chunk_at) +
                     ": the chunk's compression 'lz5' is unknown; expected none, lz4 or zstd\n");

  // Usage: exit 2.
  CHECK(run_program(domain, {bin_path("ferry"), "play"}).exit_code == 2);
  CHECK(play(good, {"--rate", "0"}).exit_code == 2);
  r = play(good, {"--topics", "nope"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ferry: --topics names 'nope', which " + good.string() + " has no channel for\n");
  r = run_program(domain, {bin_path("ferry"), "record", "-o", (dir / "x.mcap").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ferry: ferry record needs at least one TOPIC or --all\n");
  r = run_program(domain, {bin_path("ferry"), "record", "all", "-o", (dir / "x.mcap").string(),
                           "--compression", "gzip"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "ferry: --compression 'gzip' is unknown; expected none, lz4 or zstd\n");
}

TEST_CASE("ferry record --all: a topic that appears while recording is recorded too") {
  ServedConfig served(config_yaml());
  bag_test::TempDir dir("record-all");
  const auto file = dir / "all.mcap";
  Background recorder(served.domain, {bin_path("ferry"), "record", "--all", "-o", file.string(),
                                      "--duration", "2.5"});
  REQUIRE(subscribed(served.domain, "ticks"));
  // "late" is not in the configuration: the publisher's port creates it.
  Child late([] {
    ferry::Node node{"late"};
    auto pub = node.publisher<Tick>("late");
    wait_for_subscriber(pub);
    for (std::uint64_t i = 0; i < 20; ++i) {
      Tick t{};
      t.n = i;
      if (pub.publish(t).delivered != 1) return 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return 0;
  });
  CHECK(late.wait(std::chrono::seconds(5)) == 0);
  INFO(recorder.err());
  REQUIRE(recorder.wait(std::chrono::seconds(5)) == 0);
  ferry::bag::McapReader reader(file);
  std::map<std::string, std::uint64_t> counts;
  for (const auto& [id, count] : reader.summary().statistics.channel_message_counts)
    counts[reader.summary().channels.at(id).topic] = count;
  CHECK(counts.at("late") == 20);
  // The declared topics were recorded from the start (nothing published on them).
  CHECK(reader.summary().channels.size() == 5);
}

TEST_CASE(
    "ferry record: a drop_oldest topic and a stopped recorder: the missed sequences reported") {
  ServedConfig served(config_yaml());
  bag_test::TempDir dir("record-gaps");
  const auto file = dir / "gaps.mcap";
  Background recorder(served.domain, {bin_path("ferry"), "record", "ticks", "-o", file.string()});
  REQUIRE(subscribed(served.domain, "ticks"));
  constexpr std::uint64_t kTicks = 3000;
  Child ticks([] {
    ferry::Node node{"ticker"};
    auto pub = node.publisher<Tick>("ticks");
    wait_for_subscriber(pub);
    for (std::uint64_t i = 0; i < kTicks; ++i) {
      Tick t{};
      t.n = i;
      (void)pub.publish(t);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return 0;
  });
  // The recorder stopped for 300 ms: its queue of 8 overwrites what comes.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  recorder.signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  recorder.signal(SIGCONT);
  CHECK(ticks.wait(std::chrono::seconds(10)) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  recorder.signal(SIGINT);
  INFO(recorder.out() << recorder.err());
  REQUIRE(recorder.wait(std::chrono::seconds(5)) == 0);

  // The gaps in the file's sequences are the ones reported.
  ferry::bag::McapReader reader(file);
  std::uint64_t messages = 0, gaps = 0;
  std::uint32_t last = 0;
  reader.for_each_message([&](const ferry::bag::MessageView& m) {
    if (messages != 0 && m.header.sequence > last + 1) gaps += m.header.sequence - last - 1;
    last = m.header.sequence;
    ++messages;
    return true;
  });
  CHECK(gaps > 100);  // most of 300 ms at ~4 kHz
  const auto metadata = reader.metadata();
  REQUIRE(metadata.size() == 1);
  std::map<std::string, std::string> values(metadata[0].metadata.begin(),
                                            metadata[0].metadata.end());
  CHECK(values["missed:ticks"] == std::to_string(gaps));
  CHECK(values["missed"] == std::to_string(gaps));
  CHECK(values["messages:ticks"] == std::to_string(messages));
  CHECK(values["missed_ranges:ticks"].starts_with("publisher "));
  CHECK(recorder.out().find("missed " + std::to_string(gaps) +
                            " sample(s) on 'ticks' (publisher ") != std::string::npos);
}

TEST_CASE("ferry record --observe: a stopped recorder never holds a block topic's publisher") {
  ServedConfig served(config_yaml());
  bag_test::TempDir dir("record-observe");
  const auto file = dir / "observe.mcap";
  Background recorder(served.domain,
                      {bin_path("ferry"), "record", "all", "--observe", "-o", file.string()});
  constexpr std::uint32_t kSamples = 300;  // far more than the queue's 64
  const auto go = dir / "go";              // made by the parent once the recorder is stopped
  Child publisher([go] {
    ferry::Node node{"all-pub"};
    auto pub = node.publisher<All>("all");
    const auto give_up = Clock::now() + std::chrono::seconds(5);
    while (pub.observer_count() == 0 && Clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (pub.observer_count() != 1 || pub.subscriber_count() != 0) return 2;
    (void)pub.publish(make_all(0));
    // Meanwhile the parent sees the recorder take sample 0 and stops it.
    const auto no_go = Clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(go) && Clock::now() < no_go)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto start = Clock::now();
    for (std::uint32_t i = 1; i < kSamples; ++i) {
      const auto r = pub.publish(make_all(i));
      if (r.timed_out != 0 || r.delivered != 0) return 1;  // observers are not counted
    }
    // A lossless recorder would hold the 65th publish for block_timeout_ms (5 s).
    return Clock::now() - start < std::chrono::seconds(2) ? 0 : 3;
  });
  // Stopped once it took sample 0 (its queue row in topic info says so).
  const auto took_first = [&] {
    const auto r =
        run_program(served.domain, {bin_path("ferry"), "topic", "info", "all", "--json"});
    if (r.exit_code != 0) return false;
    const auto info = ferry::test::parse_json(r.out);  // named: the loop reads into it
    for (const auto& q : info["queues"])
      if (q.value("observer", false) && q.value("taken", 0) >= 1) return true;
    return false;
  };
  const auto give_up = Clock::now() + std::chrono::seconds(5);
  bool first_taken = false;
  while (!(first_taken = took_first()) && Clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(first_taken);
  recorder.signal(SIGSTOP);
  std::ofstream{go}.put('1');  // the burst starts; it lasts far less than the 1 s timeout
  const int published = publisher.wait(std::chrono::seconds(10));
  recorder.signal(SIGCONT);
  CHECK(published == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  recorder.signal(SIGINT);
  INFO(recorder.out() << recorder.err());
  REQUIRE(recorder.wait(std::chrono::seconds(5)) == 0);

  // It kept sample 0 and the newest ones (a burst of 299 overflows its queue
  // of 64 even when it runs), and reports the ones it missed.
  ferry::bag::McapReader reader(file);
  std::uint64_t messages = 0;
  std::uint32_t last = 0;
  reader.for_each_message([&](const ferry::bag::MessageView& m) {
    last = m.header.sequence;
    ++messages;
    return true;
  });
  CHECK(messages > 1);
  CHECK(messages < kSamples);
  CHECK(last == kSamples - 1);
  CHECK(recorder.out().find("missed " + std::to_string(kSamples - messages) +
                            " sample(s) on 'all'") != std::string::npos);
}

TEST_CASE("ferry play cuts a gap past --max-gap (a timestamp 11.6 days ahead) and says so") {
  bag_test::TempDir dir("play-gap");
  const auto file = dir / "gap.mcap";
  {
    ferry::bag::McapWriter writer(file, {});
    const auto pose = bag_test::add_pose_channel(writer, bag_test::add_pose_schema(writer), "pose");
    const std::uint64_t t0 = 1'000'000'000;
    const std::uint64_t ahead = 1'002'240'000'000'000;  // 11.6 days in ns
    const std::uint64_t times[] = {t0, t0 + 1'000'000, t0 + ahead, t0 + ahead + 1'000'000};
    for (std::uint32_t i = 0; i < 4; ++i)
      writer.write_message({pose, i, times[i], times[i]}, bag_test::pose_cdr(i));
    writer.close();
  }
  TestDomain domain;
  Daemon daemon(domain, bag_test::kTypesYaml);
  const auto start = Clock::now();
  const auto r = run_program(domain, {bin_path("ferry"), "play", file.string(), "--max-gap", "0.2"},
                             std::chrono::seconds(20));
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  MESSAGE("played in " << took << " s: " << r.err);
  CHECK(r.exit_code == 0);  // -1: still sleeping towards the far timestamp
  CHECK(r.err.find("message 3 (topic 'pose') was logged 1002240.0 s after the one before; "
                   "waiting 0.2 s instead (--max-gap)") != std::string::npos);
  CHECK(r.out.find("played 4 message(s)") != std::string::npos);
}

namespace {

// A recording of 10 poses on "pose" and 10 on "other", 200 ms apart.
void write_two_topics(const std::filesystem::path& file) {
  ferry::bag::McapWriter writer(file, {});
  const auto schema = bag_test::add_pose_schema(writer);
  const auto pose = bag_test::add_pose_channel(writer, schema, "pose");
  const auto other = bag_test::add_pose_channel(writer, schema, "other");
  const std::uint64_t t0 = 1'000'000'000;
  for (std::uint32_t i = 0; i < 10; ++i) {
    const std::uint64_t t = t0 + i * 200'000'000ull;
    writer.write_message({pose, i, t, t}, bag_test::pose_cdr(i));
    writer.write_message({other, i, t + 1'000'000, t + 1'000'000}, bag_test::pose_cdr(i));
  }
  writer.close();
}

// The id (pose_cdr(i): i + 7) of a played geo/Pose sample.
int pose_id(const ferry::RawSample& s) { return std::to_integer<int>(s.bytes()[0]); }

}  // namespace

TEST_CASE("ferry play --topics, --start-offset, --rate and --loop do what they say") {
  bag_test::TempDir dir("play-flags");
  const auto file = dir / "two.mcap";
  write_two_topics(file);
  ServedConfig served(std::string(bag_test::kTypesYaml) + "  - { name: other, type: geo/Pose }\n");
  ferry::Node node{"checker"};
  auto pose = node.raw_subscriber("pose");
  auto other = node.raw_subscriber("other");

  SUBCASE("--topics pose --start-offset 0.9 --rate 4: poses 5..9 only, 0.2 s instead of 0.8 s") {
    Background play(served.domain, {bin_path("ferry"), "play", file.string(), "--topics", "pose",
                                    "--start-offset", "0.9", "--rate", "4"});
    std::vector<int> ids;
    std::vector<Clock::time_point> at;
    while (ids.size() < 5) {
      auto s = pose.take(std::chrono::seconds(5));
      if (!s) break;
      ids.push_back(pose_id(*s));
      at.push_back(Clock::now());
    }
    CHECK(play.wait() == 0);
    CHECK(ids == std::vector<int>{12, 13, 14, 15, 16});
    CHECK_FALSE(pose.take());
    CHECK_FALSE(other.take());  // not among --topics
    REQUIRE(at.size() == 5);
    const double spread = std::chrono::duration<double>(at.back() - at.front()).count();
    MESSAGE("4 gaps of 200 ms at --rate 4 took " << spread << " s");
    CHECK(spread > 0.15);
    CHECK(spread < 0.6);
    CHECK(play.out().find("played 5 message(s)") != std::string::npos);
  }

  SUBCASE("--loop plays from the start again until Ctrl-C") {
    Background play(served.domain,
                    {bin_path("ferry"), "play", file.string(), "--loop", "--rate", "20"});
    std::vector<int> ids;
    while (ids.size() < 25) {
      auto s = pose.take(std::chrono::seconds(5));
      if (!s) break;
      ids.push_back(pose_id(*s));
    }
    play.signal(SIGINT);
    CHECK(play.wait() == 0);
    REQUIRE(ids.size() == 25);
    // 7..16, 7..16, 7..11: in order each round.
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK(ids[i] == 7 + static_cast<int>(i % 10));
  }
}
