#pragma once
// The RouDi daemon the iceoryx comparator measures through: one per `ferry
// bench` invocation (iceoryx 2.0 allows one per machine), started with a
// configuration written for that invocation's sizes, tracked by its pid
// only and stopped by it. No iceoryx header here: RouDi is a program.

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ferry::bench {

// One mempool of RouDi's configuration: `count` chunks of `chunk_size`
// bytes (iceoryx's chunk header included).
struct RouDiPool {
  std::uint64_t chunk_size = 0;
  std::uint32_t count = 0;
};

// The chunk a payload of `size` bytes needs: iceoryx 2.0's 40-byte chunk
// header before it, rounded up to the 8 bytes RouDi wants.
[[nodiscard]] std::uint64_t iceoryx_chunk_size(std::uint64_t size) noexcept;

// Pools for latency runs at `sizes` (one message in flight each way) and
// for throughput runs with `receivers` (queues full, every receiver holding one).
[[nodiscard]] std::vector<RouDiPool> iceoryx_latency_pools(std::span<const std::uint64_t> sizes);
[[nodiscard]] std::vector<RouDiPool> iceoryx_throughput_pools(std::span<const std::uint64_t> sizes,
                                                              std::uint32_t receivers);

// The subscriber queue of a throughput run: ferry's capacity, at most
// iceoryx 2.0's limit (256).
[[nodiscard]] std::uint32_t iceoryx_queue_capacity(std::uint64_t size) noexcept;

// RouDi's TOML (configuration version 1): one shared segment with `pools`.
[[nodiscard]] std::string roudi_toml(std::vector<RouDiPool> pools);

class RouDi {
 public:
  // Writes roudi.toml in `dir`, starts iox-roudi (output in dir/roudi.log)
  // and waits up to 10 s until it serves. The error is one sentence (with
  // RouDi's own words) when it does not: another RouDi already running on
  // the machine, a bad configuration, no iox-roudi.
  [[nodiscard]] static std::expected<std::unique_ptr<RouDi>, std::string> start(
      const std::filesystem::path& dir, const std::vector<RouDiPool>& pools);
  // Stops RouDi by its pid (SIGTERM, SIGKILL after 5 s) and removes what a
  // killed RouDi leaves behind.
  ~RouDi();
  RouDi(const RouDi&) = delete;
  RouDi& operator=(const RouDi&) = delete;

  // Empty while RouDi runs, else why it does not.
  [[nodiscard]] std::string check();
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  RouDi(std::filesystem::path log, pid_t pid) : log_(std::move(log)), pid_(pid) {}
  std::filesystem::path log_;
  pid_t pid_ = -1;
  bool served_ = false;  // it was ready: the machine's RouDi files were ours
};

// What an application of this process's RouDi leaves in /tmp when it exits
// without its destructors (as a forked side does): its socket and lock.
void remove_iceoryx_app_files(const std::string& runtime_name) noexcept;

}  // namespace ferry::bench
