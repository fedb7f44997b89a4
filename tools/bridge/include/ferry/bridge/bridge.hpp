#pragma once
// ferry bridge (docs/bridge.md): local ferry topics to and from Eclipse Cyclone
// DDS. An exported topic `a/b` is written to DDS topic `rt/a/b` with type
// `pkg::msg::dds_::Name_` in little-endian CDR (bounded strings and
// sequences as ROS 2's unbounded ones); an imported one is read from DDS and
// published locally. The DDS headers stay inside tools/bridge/src.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ferry/config/config.hpp"

namespace ferry::bridge {

// A setup problem (unknown topic, DDS refused an entity): one sentence.
class BridgeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string domain;                       // the ferry domain
  std::optional<std::uint32_t> dds_domain;  // empty: 0
  std::vector<std::string> exports;         // local -> DDS
  std::vector<std::string> imports;         // DDS -> local
  std::chrono::milliseconds stats_interval{5000};
  std::string node_name = "ferry-bridge";
  // How long an exporter polls its empty local queue (yielding the CPU
  // between polls) before it sleeps: for users with spare cores, it saves
  // the wake-up of each sample that comes within it. 0: sleep at once.
  std::chrono::microseconds export_spin{0};
  // Services (docs/bridge.md, "Services"): served here, called from DDS;
  // served in DDS, called here. How long a bridged call may take.
  std::vector<std::string> export_services;
  std::vector<std::string> import_services;
  std::chrono::milliseconds service_timeout{5000};
};

// Per-topic counts, as printed.
struct TopicCounts {
  std::string topic;
  std::uint64_t exported = 0;       // local samples written to DDS
  std::uint64_t imported = 0;       // DDS samples published locally
  std::uint64_t echoes = 0;         // local samples this bridge had imported: not exported again
  std::uint64_t undecodable = 0;    // DDS samples dropped: not the topic's CDR form
  std::uint64_t not_published = 0;  // DDS samples dropped: no loan (pool exhausted, too many loans)
  std::uint64_t write_failed = 0;   // local samples DDS refused (e.g. timed out)
  // DDS samples dropped: a string or sequence longer than the ferry type's
  // bound (string<=N, T[<=N]), or a bytes sample over max_size; never
  // truncated.
  std::uint64_t too_large = 0;
};

// Throws BridgeError, in one sentence, when the options cannot work whatever
// ferryd serves: nothing to bridge, a DDS domain without ports. run() checks
// them too; a caller checks them first to refuse before connecting.
void check_options(const Options& options);

// Runs until `stop()` returns true (polled every 100 ms), printing the
// counts to stdout every stats_interval and once at the end. `config` is
// the configuration ferryd serves: each topic must be declared there.
// Throws BridgeError when a topic or a DDS entity cannot be set up.
std::vector<TopicCounts> run(const config::Config& config, const Options& options,
                             const std::function<bool()>& stop);

}  // namespace ferry::bridge
