#include "transports/iceoryx/iceoryx_roudi.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "harness/bench_config.hpp"
#include "harness/processes.hpp"

#ifndef FERRY_IOX_ROUDI
#error "FERRY_IOX_ROUDI (the path of iox-roudi) is set by tools/bench/CMakeLists.txt"
#endif

namespace ferry::bench {

namespace {

// What RouDi 2.0 prints once it accepts applications, and when another
// RouDi holds the machine's lock.
constexpr std::string_view kReady = "RouDi is ready for clients";
constexpr std::string_view kLocked = "Could not acquire lock";

constexpr std::uint32_t kLatencyChunks =
    16;  // 1 in flight each way, a loan, the previous run's stragglers
constexpr std::uint32_t kMaxQueueCapacity = 256;  // iceoryx 2.0: MAX_SUBSCRIBER_QUEUE_CAPACITY
constexpr std::uint64_t kChunkHeader = 40;        // sizeof(iox::mepoo::ChunkHeader) in 2.0

std::string read_log(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The last lines of RouDi's log (its color codes removed), for an error message.
std::string log_tail(const std::string& log) {
  std::string plain;
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i] == '\x1b') {
      while (i < log.size() && log[i] != 'm') ++i;
      continue;
    }
    plain += log[i] == '\n' ? ' ' : log[i];
  }
  return plain.size() > 300 ? "..." + plain.substr(plain.size() - 300) : plain;
}

// What a RouDi 2.0 makes and removes when it stops: its management and
// data segments (the data segment is named after the user's group), its
// socket, its locks. Only removed after our RouDi, which held the
// machine's lock until then, exited.
void remove_roudi_files() noexcept {
  std::error_code ec;
  std::vector<std::filesystem::path> files{"/dev/shm/iceoryx_mgmt", "/tmp/roudi", "/tmp/roudi.lock",
                                           "/tmp/iox-unique-roudi.lock"};
  if (const group* g = ::getgrgid(::getegid()); g != nullptr && g->gr_name != nullptr) {
    files.emplace_back(std::filesystem::path("/dev/shm") / g->gr_name);
  }
  for (const auto& f : files) std::filesystem::remove(f, ec);
}

}  // namespace

std::uint64_t iceoryx_chunk_size(std::uint64_t size) noexcept {
  return (size + kChunkHeader + 7) / 8 * 8;
}

std::uint32_t iceoryx_queue_capacity(std::uint64_t size) noexcept {
  return std::min(throughput_capacity(size), kMaxQueueCapacity);
}

std::vector<RouDiPool> iceoryx_latency_pools(std::span<const std::uint64_t> sizes) {
  std::vector<RouDiPool> pools;
  for (auto s : sizes) pools.push_back(RouDiPool{iceoryx_chunk_size(s), kLatencyChunks});
  return pools;
}

std::vector<RouDiPool> iceoryx_throughput_pools(std::span<const std::uint64_t> sizes,
                                                std::uint32_t receivers) {
  // A chunk delivered to K queues is one chunk: at most a full queue's worth
  // is in flight, plus what every receiver holds and the sender's loans;
  // twice that for a run whose predecessor's chunks are still being freed.
  std::vector<RouDiPool> pools;
  for (auto s : sizes)
    pools.push_back(
        RouDiPool{iceoryx_chunk_size(s), 2 * (iceoryx_queue_capacity(s) + receivers + 8)});
  return pools;
}

std::string roudi_toml(std::vector<RouDiPool> pools) {
  // RouDi wants the mempools in increasing chunk size; equal sizes merge.
  std::sort(pools.begin(), pools.end(),
            [](const RouDiPool& a, const RouDiPool& b) { return a.chunk_size < b.chunk_size; });
  std::vector<RouDiPool> merged;
  for (const auto& p : pools) {
    if (!merged.empty() && merged.back().chunk_size == p.chunk_size) {
      merged.back().count = std::max(merged.back().count, p.count);
    } else {
      merged.push_back(p);
    }
  }
  std::string toml =
      "# Written by ferry bench for one invocation: a pool per message size.\n"
      "[general]\nversion = 1\n\n[[segment]]\n";
  for (const auto& p : merged) {
    toml += fmt::format("\n[[segment.mempool]]\nsize = {}\ncount = {}\n", p.chunk_size, p.count);
  }
  return toml;
}

std::expected<std::unique_ptr<RouDi>, std::string> RouDi::start(
    const std::filesystem::path& dir, const std::vector<RouDiPool>& pools) {
  const std::filesystem::path program = FERRY_IOX_ROUDI;
  if (::access(program.c_str(), X_OK) != 0) {
    return std::unexpected(fmt::format(
        "cannot run {} (iceoryx's daemon RouDi): is the iceoryx package still installed?",
        program.string()));
  }
  const auto config = dir / "roudi.toml";
  {
    std::ofstream out(config);
    out << roudi_toml(pools);
    if (!out) return std::unexpected(fmt::format("cannot write {}", config.string()));
  }
  const auto log_path = dir / "roudi.log";
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log < 0) return std::unexpected(fmt::format("cannot create {}", log_path.string()));
  // Monitoring off: the benchmark watches its sides itself (by pid, with a
  // deadline), and a side spinning on a loaded machine must not be declared
  // dead for a late keep-alive.
  const std::vector<std::string> argv{program.string(), "-c", config.string(), "-m", "off", "-l",
                                      "warning"};
  pid_t pid = -1;
  try {
    pid = spawn_program(argv, log, {}, SIGTERM);
  } catch (const std::exception& e) {
    ::close(log);
    return std::unexpected(std::string(e.what()));
  }
  ::close(log);
  std::unique_ptr<RouDi> roudi(new RouDi(log_path, pid));

  const std::int64_t deadline = now_ns() + 10'000'000'000;
  for (;;) {
    const std::string text = read_log(log_path);
    if (text.find(kReady) != std::string::npos) {
      roudi->served_ = true;
      return roudi;
    }
    int code = -1;
    if (!child_running(pid, &code)) {
      roudi->pid_ = -1;
      if (text.find(kLocked) != std::string::npos) {
        return std::unexpected(
            "another RouDi (iceoryx's daemon) already runs on this machine and iceoryx 2.0 allows "
            "one per machine; "
            "stop it, or measure without iceoryx");
      }
      return std::unexpected(
          fmt::format("iox-roudi exited with code {}: {}", code, log_tail(text)));
    }
    if (now_ns() > deadline) {
      return std::unexpected(
          fmt::format("iox-roudi was not ready within 10 s (stopped): {}", log_tail(text)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

RouDi::~RouDi() {
  if (pid_ > 0) (void)stop_child(pid_, std::chrono::seconds(5));
  if (served_) remove_roudi_files();  // a RouDi that stopped cleanly removed them already
}

std::string RouDi::check() {
  if (pid_ <= 0) return "iox-roudi is not running";
  int code = -1;
  if (child_running(pid_, &code)) return {};
  pid_ = -1;
  return fmt::format("iox-roudi exited with code {}: {}", code, log_tail(read_log(log_)));
}

void remove_iceoryx_app_files(const std::string& runtime_name) noexcept {
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path("/tmp") / runtime_name, ec);
  std::filesystem::remove(std::filesystem::path("/tmp") / (runtime_name + ".lock"), ec);
}

}  // namespace ferry::bench
