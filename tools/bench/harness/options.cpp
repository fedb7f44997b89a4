#include "ferry/bench/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "ferry/bench/machine.hpp"
#include "ferry/config/units.hpp"

namespace ferry::bench {

namespace {

// Splits every value at commas: "--size 64,4KiB --size 1MiB" gives three.
std::vector<std::string> split_all(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    std::size_t start = 0;
    while (start <= v.size()) {
      const std::size_t comma = std::min(v.find(',', start), v.size());
      std::string item = v.substr(start, comma - start);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) out.push_back(std::move(item));
      start = comma + 1;
    }
  }
  return out;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += fmt::format("{}{}", s.empty() ? "" : ",", c);
  return s.empty() ? "none" : s;
}

void finalize_common(CommonOptions& o, std::size_t processes) {
  if (o.transports.empty()) o.transports = default_transports();
  if (o.repeat < 1 || o.repeat > 1000) {
    throw UsageError(fmt::format("--repeat must be between 1 and 1000, not {}", o.repeat));
  }
  if (o.cpus.empty()) {
    // Default: no side pinned; the scheduler places them (on a shared
    // machine a pinned side cannot move away from a busy CPU), and the
    // spread of the repeats shows what that cost.
    o.pinned = false;
    o.cpus.assign(processes, -1);
    return;
  }
  if (o.cpus.size() < 2) {
    throw UsageError(
        "--cpus needs a CPU for each side, the sending one first, then the receiving one(s): "
        "e.g. --cpus 0,1");
  }
  o.pinned = true;
  while (o.cpus.size() < processes) {
    // Fewer CPUs than processes: the receivers go round the ones given after the first.
    const std::size_t receivers = o.cpus.size() > 1 ? o.cpus.size() - 1 : 1;
    const std::size_t first_receiver = o.cpus.size() > 1 ? 1 : 0;
    o.cpus.push_back(o.cpus[first_receiver + (o.cpus.size() - 1) % receivers]);
  }
}

}  // namespace

std::string_view to_string(Wait wait) noexcept { return wait == Wait::Spin ? "spin" : "sleep"; }

bool iceoryx_built() noexcept {
#ifdef FERRY_BENCH_HAVE_ICEORYX
  return true;
#else
  return false;
#endif
}

bool fastdds_built() noexcept {
#ifdef FERRY_BENCH_HAVE_FASTDDS
  return true;
#else
  return false;
#endif
}

bool cyclonedds_built() noexcept {
#ifdef FERRY_BENCH_HAVE_CYCLONEDDS
  return true;
#else
  return false;
#endif
}

const std::vector<std::string>& known_transports() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{
        std::string(kFerry),        std::string(kFerryCopy),    std::string(kFerryLoan),
        std::string(kFerryWaitSet), std::string(kFerryFd),      std::string(kFerryC),
        std::string(kRawRing),      std::string(kRawRingOwned), std::string(kCacheline),
        std::string(kUnixSocket),   std::string(kPipe),         std::string(kFerryImage)};
    if (iceoryx_built()) n.emplace_back(kIceoryx);
    if (fastdds_built()) n.emplace_back(kFastDds);
    if (cyclonedds_built()) n.emplace_back(kCycloneDds);
    return n;
  }();
  return names;
}

const std::vector<std::string>& default_transports() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{std::string(kFerry), std::string(kRawRing), std::string(kUnixSocket),
                               std::string(kPipe)};
    if (iceoryx_built()) n.emplace_back(kIceoryx);
    return n;
  }();
  return names;
}

std::vector<std::uint64_t> parse_sizes(const std::vector<std::string>& values) {
  std::vector<std::uint64_t> sizes;
  for (const auto& item : split_all(values)) {
    const auto size = config::parse_size(item);
    if (!size) {
      throw UsageError(
          fmt::format("--size '{}' is not a size; write bytes as 64, 4KiB, 1MiB or 3110400", item));
    }
    if (*size < kMinSize || *size > kMaxSize) {
      throw UsageError(
          fmt::format("--size {} is out of range: {} B (the sequence number) to {} MiB", item,
                      kMinSize, kMaxSize >> 20));
    }
    if (std::find(sizes.begin(), sizes.end(), *size) == sizes.end()) sizes.push_back(*size);
  }
  return sizes;
}

std::vector<std::string> parse_transports(const std::vector<std::string>& values) {
  std::vector<std::string> wanted = split_all(values);
  for (const auto& w : wanted) {
    if (w == kIceoryx && !iceoryx_built()) {
      throw UsageError(
          "iceoryx was not found when ferry was built; install libiceoryx-posh-dev and rebuild");
    }
    if (w == kFastDds && !fastdds_built()) {
      throw UsageError(
          "fastdds was left out of this build: Fast DDS was not found when ferry was built; "
          "install libfastrtps-dev and rebuild");
    }
    if (w == kCycloneDds && !cyclonedds_built()) {
      throw UsageError(
          "cyclonedds was left out of this build: Cyclone DDS or its idlc was not found when "
          "ferry was built; install cyclonedds-dev and cyclonedds-tools and rebuild");
    }
    if (std::find(known_transports().begin(), known_transports().end(), w) ==
        known_transports().end()) {
      throw UsageError(fmt::format(
          "unknown transport '{}'; expected ferry, ferry-copy, ferry-loan, "
          "ferry-waitset, ferry-fd, ferry-c, raw-ring, cacheline, unix-socket, pipe, iceoryx, "
          "fastdds or cyclonedds",
          w));
    }
  }
  std::vector<std::string> out;
  for (const auto& t : known_transports()) {
    if (std::find(wanted.begin(), wanted.end(), t) != wanted.end()) out.push_back(t);
  }
  return out;
}

std::vector<int> parse_cpus(const std::vector<std::string>& values) {
  const std::vector<int> allowed = allowed_cpus();
  std::vector<int> cpus;
  for (const auto& item : split_all(values)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || v < 0 || v > 4095) {
      throw UsageError(fmt::format("--cpus '{}' is not a CPU number; write e.g. --cpus 0,1", item));
    }
    if (std::find(allowed.begin(), allowed.end(), static_cast<int>(v)) == allowed.end()) {
      throw UsageError(
          fmt::format("--cpus {}: CPU {} is not available to this process (available: {})", item, v,
                      cpu_list(allowed)));
    }
    if (std::find(cpus.begin(), cpus.end(), static_cast<int>(v)) != cpus.end()) {
      throw UsageError(
          fmt::format("--cpus lists CPU {} twice; each side is pinned to a CPU of its own", v));
    }
    cpus.push_back(static_cast<int>(v));
  }
  return cpus;
}

Wait parse_wait(std::string_view value) {
  if (value == "spin") return Wait::Spin;
  if (value == "sleep") return Wait::Sleep;
  throw UsageError(fmt::format("--wait '{}' is not a wait mode; expected spin or sleep", value));
}

namespace {

// A duration option: above 0 and at most `max` seconds. Written so that NaN
// (which every comparison fails) is refused too.
void check_seconds(const char* option, double seconds, double max) {
  if (!(seconds > 0 && seconds <= max)) {
    throw UsageError(
        fmt::format("{} must be above 0 and at most {} (seconds), not {}", option, max, seconds));
  }
}

}  // namespace

std::uint64_t auto_rounds(std::uint64_t size) noexcept {
  constexpr std::uint64_t kFull = 16 * 1024;
  if (size <= kFull) return kDefaultRounds;
  return std::max<std::uint64_t>(300, kDefaultRounds * kFull / size);
}

void finalize(LatencyOptions& o) {
  if (o.sizes.empty()) o.sizes = {64, 4096, 64 * 1024, 1024 * 1024, kFrameSize};
  if (o.transports.empty()) {
    // The defaults and the floor every latency report compares them with.
    o.transports = parse_transports([&] {
      auto n = default_transports();
      n.emplace_back(kCacheline);
      return n;
    }());
  }
  check_seconds("--max-run-seconds", o.max_run_seconds, 3600);
  if (o.rounds > 100'000'000) throw UsageError("--rounds must be at most 100000000");
  finalize_common(o, 2);
}

void finalize(ThroughputOptions& o) {
  if (o.sizes.empty()) o.sizes = {64};
  if (std::find(o.transports.begin(), o.transports.end(), kFerryImage) != o.transports.end())
    throw UsageError("ferry-image is a latency transport; expected it with `ferry bench latency`");
  check_seconds("--seconds", o.seconds, 3600);
  if (o.subscribers < 1 || o.subscribers > kMaxSubscribers) {
    throw UsageError(fmt::format("--subscribers must be between 1 and {}", kMaxSubscribers));
  }
  if (o.batch < 1 || o.batch > kMaxBatch) {
    throw UsageError(fmt::format("--batch must be between 1 and {}", kMaxBatch));
  }
  if (std::find(o.transports.begin(), o.transports.end(), kCacheline) != o.transports.end()) {
    if (o.wait != Wait::Spin)
      throw UsageError("cacheline's throughput floor polls; measure it with --wait spin");
    for (const auto size : o.sizes) {
      if (size > kCachelineStreamMax) {
        throw UsageError(fmt::format("cacheline's throughput floor streams up to {} B, not {} B",
                                     kCachelineStreamMax, size));
      }
    }
  }
  finalize_common(o, 1 + o.subscribers);
}

void finalize(ScaleOptions& o) {
  if (o.nodes < 1 || o.nodes > kMaxScaleNodes) {
    throw UsageError(
        fmt::format("--nodes must be between 1 and {}, not {}", kMaxScaleNodes, o.nodes));
  }
  if (o.topics < 1 || o.topics > kMaxScaleTopics) {
    throw UsageError(
        fmt::format("--topics must be between 1 and {}, not {}", kMaxScaleTopics, o.topics));
  }
  check_seconds("--idle-seconds", o.idle_seconds, 600);
  check_seconds("--traffic-seconds", o.traffic_seconds, 600);
  if (o.rate_hz < 1 || o.rate_hz > 10'000) throw UsageError("--rate must be between 1 and 10000");
  if (o.repeat < 1 || o.repeat > 100) {
    throw UsageError(fmt::format("--repeat must be between 1 and 100, not {}", o.repeat));
  }
}

std::vector<std::uint32_t> parse_counts(const std::vector<std::string>& values) {
  std::vector<std::uint32_t> out;
  for (const auto& item : split_all(values)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || v < 1 || v > kMaxSubscribers) {
      throw UsageError(
          fmt::format("--subscribers '{}' is not a count from 1 to {}", item, kMaxSubscribers));
    }
    if (std::find(out.begin(), out.end(), static_cast<std::uint32_t>(v)) == out.end()) {
      out.push_back(static_cast<std::uint32_t>(v));
    }
  }
  return out;
}

void finalize(FanoutOptions& o) {
  if (o.subscribers.empty()) o.subscribers = {1, 2, 4, 8, 16};
  if (o.transports.empty()) {
    o.transports = {std::string(kFerry), std::string(kFerryLoan), std::string(kUnixSocket)};
    if (iceoryx_built()) o.transports.emplace_back(kIceoryx);
  }
  for (const auto& t : o.transports) {
    if (t != kFerry && t != kFerryLoan && t != kUnixSocket && t != kIceoryx) {
      throw UsageError(fmt::format(
          "transport '{}' has no fanout side; expected ferry, ferry-loan, unix-socket or iceoryx",
          t));
    }
  }
  if (o.samples < 10 || o.samples > 10'000'000) {
    throw UsageError("--samples must be between 10 and 10000000");
  }
  if (o.gap_us < 0 || o.gap_us > 1'000'000) {
    throw UsageError("--gap-us must be between 0 and 1000000");
  }
  if (o.repeat < 1 || o.repeat > 1000) {
    throw UsageError(fmt::format("--repeat must be between 1 and 1000, not {}", o.repeat));
  }
}

}  // namespace ferry::bench
