#pragma once
// What `ferry bench latency|throughput` is asked to do, parsed and checked.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::bench {

// A bad flag value: the CLI prints it and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a side waits for the peer: spin (busy-poll, the lowest latency) or
// sleep (every side blocks in the kernel: take with a timeout, futex, read).
enum class Wait : std::uint8_t { Spin, Sleep };
[[nodiscard]] std::string_view to_string(Wait wait) noexcept;

// The transports, in the order they run and are shown.
// ferry: what a user of the full API gets at each size: publish(const T&) /
// take() while the sample fits a ring slot (config::kMaxInlineSample, copied
// into the slot), loan / publish / take above (zero copy).
inline constexpr std::string_view kFerry = "ferry";
inline constexpr std::string_view kFerryCopy = "ferry-copy";  // publish(const T&) at every size
inline constexpr std::string_view kFerryLoan = "ferry-loan";  // loan / publish at every size
// Latency only: ferry-copy with each side waiting in a WaitSet's wait(), or
// in poll() on its fd() (then wait(0)), instead of take(timeout).
inline constexpr std::string_view kFerryWaitSet = "ferry-waitset";
inline constexpr std::string_view kFerryFd = "ferry-fd";
// Latency only: ferry-copy with the pinging side written against the C API
// (libferry_c), the echo side in C++: what the C binding adds.
inline constexpr std::string_view kFerryC = "ferry-c";
// Latency only: ferry-loan with a sensor_msgs/msg/Image (ferry's shipped
// definition: a header, an encoding string, `size` bytes of data in its
// bounded sequence) instead of a bytes sample, to compare with ferry-loan's
// fixed-size frame of the same size.
inline constexpr std::string_view kFerryImage = "ferry-image";
inline constexpr std::string_view kRawRing = "raw-ring";
// Latency only: raw-ring passing a reference, plus an owner word that four
// CASes move (claim, hand-over, accept, release): the floor of a zero-copy
// hand-off that knows at every moment who holds the buffer. Up to 4 KiB the
// same as raw-ring.
inline constexpr std::string_view kRawRingOwned = "raw-ring-owned";
inline constexpr std::string_view kUnixSocket = "unix-socket";
inline constexpr std::string_view kPipe = "pipe";
// The optional comparator: iceoryx 2.x through a RouDi of its own, known
// only when CMake found iceoryx when ferry was built.
inline constexpr std::string_view kIceoryx = "iceoryx";
[[nodiscard]] bool iceoryx_built() noexcept;
// The DDS comparators, what ROS 2 users run (optional like iceoryx): Fast
// DDS 2.x (shared-memory transport, data-sharing and loans for its plain
// fixed-size type) and Cyclone DDS (loopback UDP), each known only when
// CMake found it.
inline constexpr std::string_view kFastDds = "fastdds";
inline constexpr std::string_view kCycloneDds = "cyclonedds";
[[nodiscard]] bool fastdds_built() noexcept;
[[nodiscard]] bool cyclonedds_built() noexcept;
// Latency only: one cache line passed between the two sides, the floor of a
// cross-core hand-off; latency reports give every transport's multiple of it.
inline constexpr std::string_view kCacheline = "cacheline";
// The largest message cacheline's throughput floor streams (its ring is 64 KiB).
inline constexpr std::uint64_t kCachelineStreamMax = 4096;
// ferry, ferry-copy or ferry-loan: measured through the private ferryd.
[[nodiscard]] constexpr bool is_ferry(std::string_view transport) noexcept {
  return transport == kFerry || transport == kFerryCopy || transport == kFerryLoan ||
         transport == kFerryWaitSet || transport == kFerryFd || transport == kFerryC ||
         transport == kFerryImage;
}
// Every transport, in canonical order.
[[nodiscard]] const std::vector<std::string>& known_transports();
// The ones measured when --transports is not given (ferry-copy and
// ferry-loan are asked for; iceoryx is measured when it was built; the DDS
// comparators are asked for). Latency adds the floor, cacheline.
[[nodiscard]] const std::vector<std::string>& default_transports();

struct CommonOptions {
  std::vector<std::uint64_t> sizes;     // bytes per message, >= 8 (the sequence number)
  std::vector<std::string> transports;  // a subset of known_transports(), in their order
  // [0]: the sender/pinger, then the receivers; -1: not pinned. --cpus
  // fills it (pinned); without it every side is left to the scheduler.
  std::vector<int> cpus;
  bool pinned = false;  // --cpus was given
  Wait wait = Wait::Spin;
  int repeat = 3;  // interleaved repetitions; medians (and min / max) are reported
  bool json = false;
};

// `ferry bench rpc` (docs/services.md): round trips of 64-byte calls.
struct RpcOptions {
  std::uint64_t rounds = 20000;  // measured calls per run
  std::uint32_t repeat = 3;      // runs per transport; the median is reported
  std::vector<int> cpus;         // [0]: the client, [1]: the server; empty: not pinned
  bool json = false;
};

struct LatencyOptions : CommonOptions {
  std::uint64_t rounds = 0;      // measured round trips per run; 0: by size (auto_rounds)
  double max_run_seconds = 1.0;  // a run stops measuring after this long (fewer samples)
};

struct ThroughputOptions : CommonOptions {
  double seconds = 1.0;           // measured time per run
  std::uint32_t subscribers = 1;  // receivers (fan-out), each its own process
  // Messages per publish_many / take_many for the transports that batch
  // (ferry's copy path, ferry-loan with loan_many, raw-ring); 1: one at a time.
  std::uint32_t batch = 1;
};
inline constexpr std::uint32_t kMaxBatch = 4096;

// `ferry bench scale`: N node processes, each publishing M topics of its own
// and subscribing to the M topics of the next node (node N-1 to node 0's),
// so N x M queues and 2 x N x M ports.
struct ScaleOptions {
  std::uint32_t nodes = 100;
  std::uint32_t topics = 10;     // per node
  double idle_seconds = 3.0;     // ferryd's idle CPU is measured over this, after matching
  double traffic_seconds = 2.0;  // then every node publishes, and latency is sampled
  std::uint32_t rate_hz = 100;   // samples each node publishes per second (round the topics)
  int repeat = 1;                // whole runs, each with its own ferryd; medians reported
  bool json = false;
};
inline constexpr std::uint32_t kMaxScaleNodes = 900;  // below ferryd's default connection limit
inline constexpr std::uint32_t kMaxScaleTopics = 64;  // a WaitSet's attachments

// `ferry bench fanout`: 1 publisher, K sleeping subscribers (each its own
// process), for every K of `subscribers`.
struct FanoutOptions {
  std::vector<std::uint32_t> subscribers;  // default 1, 2, 4, 8, 16
  std::vector<std::string> transports;     // ferry, ferry-loan, unix-socket, iceoryx
  std::uint64_t samples = 2000;            // measured per run
  std::int64_t gap_us = 300;               // between samples: every subscriber is asleep again
  int repeat = 3;
  bool json = false;
};

inline constexpr std::uint64_t kMinSize = 8;             // the sequence number
inline constexpr std::uint64_t kMaxSize = 256ull << 20;  // 256 MiB
inline constexpr std::uint32_t kMaxSubscribers = 16;
inline constexpr std::uint64_t kDefaultRounds = 20'000;
// Default latency sizes: a pose, a page, a small image, a point cloud, a
// 1080p NV12 frame.
inline constexpr std::uint64_t kFrameSize = 3'110'400;

// "64", "4KiB", "3110400", "64,4KiB" (lists), each >= kMinSize.
[[nodiscard]] std::vector<std::uint64_t> parse_sizes(const std::vector<std::string>& values);
// Names from known_transports() (lists allowed), returned in canonical order.
[[nodiscard]] std::vector<std::string> parse_transports(const std::vector<std::string>& values);
// CPU numbers (lists allowed), each one this process may run on, none twice.
[[nodiscard]] std::vector<int> parse_cpus(const std::vector<std::string>& values);
[[nodiscard]] Wait parse_wait(std::string_view value);

// Rounds per run when --rounds is not given: kDefaultRounds up to 16 KiB,
// then in proportion to 1/size (copies get expensive), at least 300.
[[nodiscard]] std::uint64_t auto_rounds(std::uint64_t size) noexcept;

// Fills defaults (sizes, transports, CPUs) and checks the ranges; throws UsageError.
void finalize(LatencyOptions& options);
void finalize(ThroughputOptions& options);
void finalize(ScaleOptions& options);
void finalize(FanoutOptions& options);
// "1,2,4" (lists allowed), each 1 to kMaxSubscribers.
[[nodiscard]] std::vector<std::uint32_t> parse_counts(const std::vector<std::string>& values);

}  // namespace ferry::bench
