// ferry record with a stalled output (issue 15, "Measured"): the file is a
// FIFO that the test reads and, at a chosen point, stops reading for a
// while, so the recorder's write() blocks as on a disk in writeback. The
// recorder keeps taking samples meanwhile and holds up to the topic's
// max_held: a stall shorter than that misses nothing; a longer one is
// reported as a gap, as any missed sample is.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ferry/ferry.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bag_test_util.hpp"
#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "ferry/bag/mcap_reader.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using Clock = std::chrono::steady_clock;

namespace {

// 64 KiB samples: large enough to be written from the pool in place, as
// frames are (their CDR form is their bytes), small enough for a pool of a
// few MiB.
struct Blob {
  std::uint64_t index;
  std::uint8_t bytes[65536 - sizeof(std::uint64_t)];
};

constexpr std::uint32_t kRateHz = 100;
constexpr std::uint32_t kCapacity = 4;
constexpr std::uint32_t kMaxHeld = 48;  // with the queue: 52 samples, 520 ms at 100 Hz

std::string config_yaml() {
  // A loose liveness timeout: under TSan on a loaded machine a node's
  // heartbeat thread can miss the default 1 s, which is not what this tests.
  return "liveness: { heartbeat_ms: 100, timeout_ms: 5000 }\n"
         "types:\n"
         "  Blob:\n"
         "    fields:\n"
         "      - { name: index, type: u64 }\n"
         "      - { name: bytes, type: \"u8[65528]\" }\n"
         "topics:\n"
         "  - { name: blobs, type: Blob, capacity: " +
         std::to_string(kCapacity) +
         ", policy: drop_oldest, max_held: " + std::to_string(kMaxHeld) +
         " }\n"
         "pool:\n"
         "  - { chunk_size: 64KiB, count: 80 }\n";
}

}  // namespace

FERRY_TYPE_NAMED(Blob, "Blob");

namespace {

// Loaned blobs at kRateHz, each carrying its index.
Child blob_publisher(std::uint32_t count) {
  return Child([count] {
    ferry::Node node{"blobs-pub"};
    auto pub = node.publisher<Blob>("blobs");
    // Generous: a TSan build of the recorder on a loaded machine starts slowly.
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(30))) return 3;
    auto next = Clock::now();
    for (std::uint32_t i = 0; i < count; ++i) {
      auto loan = pub.loan();
      if (!loan) return 2;  // the recorder must leave the publisher chunks to loan
      (*loan)->index = i;
      std::memset((*loan)->bytes, static_cast<int>(i & 0xFF), sizeof(*loan)->bytes);
      if (pub.publish(std::move(*loan)).delivered != 1) return 1;
      next += std::chrono::microseconds(1'000'000 / kRateHz);
      std::this_thread::sleep_until(next);
    }
    return 0;
  });
}

// Reads a FIFO into a file, and stops reading for `stall` once `stall_after`
// bytes came: the writer's write() then blocks (the pipe holds 64 KiB).
class SlowReader {
 public:
  // Makes the FIFO and opens its reading end (a writer's open() then
  // succeeds at once).
  SlowReader(std::filesystem::path fifo, std::filesystem::path out)
      : fifo_(std::move(fifo)), out_(std::move(out)) {
    REQUIRE(::mkfifo(fifo_.c_str(), 0600) == 0);
    // Non-blocking, so that a recorder that never writes cannot hang the
    // test: poll() waits for data with a deadline instead.
    fd_ = ::open(fifo_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(fd_ >= 0);
  }
  // Starts reading on a thread of its own (after the test's forks: a
  // forked child of a threaded process must not start threads under TSan).
  void start(std::uint64_t stall_after, std::chrono::milliseconds stall) {
    thread_ = std::thread([this, stall_after, stall] { run(stall_after, stall); });
  }
  ~SlowReader() {
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  SlowReader(const SlowReader&) = delete;
  SlowReader& operator=(const SlowReader&) = delete;

  // Waits for the writer to close its end; whether everything was read.
  bool finish() {
    thread_.join();
    return complete_;
  }
  [[nodiscard]] bool stalled() const { return stalled_; }

 private:
  void run(std::uint64_t stall_after, std::chrono::milliseconds stall) {
    std::ofstream out(out_, std::ios::binary);
    std::vector<char> buffer(1 << 16);
    std::uint64_t total = 0;
    bool opened = false;  // a writer connected (before that poll() says nothing)
    const auto give_up = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < give_up) {
      if (!stalled_ && total >= stall_after) {
        stalled_ = true;
        std::this_thread::sleep_for(stall);
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
      if (n > 0) {
        out.write(buffer.data(), n);
        total += static_cast<std::uint64_t>(n);
        opened = true;
      } else if (n == 0 && (opened || (p.revents & POLLHUP) != 0)) {
        complete_ = true;  // the writer closed the file
        return;
      }
    }
  }

  std::filesystem::path fifo_, out_;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stalled_{false};
  bool complete_ = false;  // read by finish() after the join
};

struct Recording {
  std::uint64_t messages = 0;
  std::uint64_t gaps = 0;  // missing sequences between the recorded ones
  std::map<std::string, std::string> metadata;
};

Recording read_recording(const std::filesystem::path& file) {
  ferry::bag::McapReader reader(file);
  reader.verify();
  Recording r;
  std::uint32_t last = 0;
  reader.for_each_message([&](const ferry::bag::MessageView& m) {
    if (r.messages != 0 && m.header.sequence > last + 1) r.gaps += m.header.sequence - last - 1;
    last = m.header.sequence;
    ++r.messages;
    return true;
  });
  const auto metadata = reader.metadata();
  REQUIRE(metadata.size() == 1);
  r.metadata.insert(metadata[0].metadata.begin(), metadata[0].metadata.end());
  return r;
}

// Records `count` blobs into a FIFO read by a SlowReader that stalls for
// `stall` after a fifth of them; the recorder stops at Ctrl-C once the
// publisher is done and the backlog is written.
struct StalledRun {
  Recording recording;
  std::string out;
};

StalledRun record_with_stall(std::uint32_t count, std::chrono::milliseconds stall,
                             const std::string& tag) {
  ServedConfig served(config_yaml());
  bag_test::TempDir dir(tag);
  const auto fifo = dir / "fifo.mcap";
  const auto file = dir / "copy.mcap";
  SlowReader reader(fifo, file);
  Background recorder(served.domain, {bin_path("ferry"), "record", "blobs", "-o", fifo.string()});
  Child publisher = blob_publisher(count);
  reader.start(std::uint64_t{count / 5} * sizeof(Blob), stall);
  CHECK(publisher.wait(std::chrono::seconds(30)) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  recorder.signal(SIGINT);
  const int code = recorder.wait(std::chrono::seconds(10));
  INFO(recorder.out() << recorder.err());
  CHECK(code == 0);
  REQUIRE(reader.finish());
  CHECK(reader.stalled());
  return StalledRun{read_recording(file), recorder.out()};
}

}  // namespace

TEST_CASE("ferry record: a write stall shorter than max_held covers misses no sample") {
  // 250 ms at 100 Hz: 25 samples, more than the queue's 4 (all a recorder
  // writing on its taking thread could keep), fewer than 4 + max_held.
  constexpr std::uint32_t kCount = 200;
  const StalledRun run = record_with_stall(kCount, std::chrono::milliseconds(250), "stall-short");
  INFO(run.out);
  CHECK(run.recording.messages == kCount);
  CHECK(run.recording.gaps == 0);
  CHECK(run.recording.metadata.at("missed") == "0");
  CHECK(run.recording.metadata.at("messages:blobs") == std::to_string(kCount));
  CHECK(run.out.find("missed") == std::string::npos);
}

TEST_CASE("ferry record: a write stall longer than max_held covers is reported as a gap") {
  // 1.5 s at 100 Hz: 150 samples, far more than 4 + 48.
  constexpr std::uint32_t kCount = 250;
  const StalledRun run = record_with_stall(kCount, std::chrono::milliseconds(1500), "stall-long");
  INFO(run.out);
  CHECK(run.recording.gaps > 50);
  CHECK(run.recording.metadata.at("missed") == std::to_string(run.recording.gaps));
  CHECK(run.recording.metadata.at("messages:blobs") == std::to_string(run.recording.messages));
  CHECK(run.out.find("missed " + std::to_string(run.recording.gaps) +
                     " sample(s) on 'blobs' (publisher ") != std::string::npos);
}

namespace {

// Small samples: the recorder copies them into its arena and frees their
// buffers at once, so only the writer's queue bounds how many wait.
struct Tiny {
  std::uint64_t index;
  std::uint64_t pad[7];
};

std::string tiny_config_yaml() {
  return "liveness: { heartbeat_ms: 100, timeout_ms: 5000 }\n"
         "types:\n"
         "  Tiny:\n"
         "    fields:\n"
         "      - { name: index, type: u64 }\n"
         "      - { name: pad, type: \"u64[7]\" }\n"
         "topics:\n"
         "  - { name: tiny, type: Tiny, capacity: 256, policy: drop_oldest }\n";
}

}  // namespace

FERRY_TYPE_NAMED(Tiny, "Tiny");

TEST_CASE(
    "ferry record --all: a topic that appears while copied samples fill the writer's queue is "
    "recorded once the writer catches up, and the summary is printed") {
  ServedConfig served(tiny_config_yaml());
  bag_test::TempDir dir("record-queue-full");
  const auto fifo = dir / "fifo.mcap";
  const auto file = dir / "copy.mcap";
  SlowReader reader(fifo, file);
  Background recorder(served.domain, {bin_path("ferry"), "record", "--all", "-o", fifo.string()});
  // 4000 small samples a second for 3 s: the chunk written after 1 s
  // (hundreds of KiB) blocks the writer in write() while the reader stalls,
  // and the copied samples behind it fill the queue (4097 entries) by ~2 s.
  Child small([] {
    ferry::Node node{"tiny-pub"};
    auto pub = node.publisher<Tiny>("tiny");
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(30))) return 3;
    auto next = Clock::now();
    for (std::uint64_t i = 0; i < 12'000; ++i) {
      (void)pub.publish(Tiny{i, {}});
      if (i % 40 == 39) {
        next += std::chrono::milliseconds(10);
        std::this_thread::sleep_until(next);
      }
    }
    return 0;
  });
  // A topic that appears at 3.5 s, while the queue is full: --all finds it
  // within half a second and must wait for room, not fail.
  Child late([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    ferry::Node node{"late-pub"};
    auto pub = node.publisher<Tiny>("late");
    if (!pub.wait_for_subscribers(1, std::chrono::seconds(30))) return 3;
    for (std::uint64_t i = 0; i < 10; ++i) {
      if (pub.publish(Tiny{i, {}}).delivered != 1) return 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  });
  reader.start(1, std::chrono::milliseconds(6000));  // stalls right after the file's header
  CHECK(small.wait(std::chrono::seconds(30)) == 0);
  CHECK(late.wait(std::chrono::seconds(40)) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  recorder.signal(SIGINT);
  const int code = recorder.wait(std::chrono::seconds(20));
  INFO(recorder.out() << recorder.err());
  CHECK(code == 0);
  CHECK(recorder.out().find("recorded ") != std::string::npos);
  REQUIRE(reader.finish());
  CHECK(reader.stalled());
  const Recording recording = read_recording(file);
  CHECK(recording.metadata.at("messages:late") == "10");
  CHECK(recording.metadata.count("messages:tiny") == 1);
}
