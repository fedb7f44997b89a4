#pragma once
// The flags of every `ferry` verb as plain values. cli_options.cpp (the only
// file that includes CLI11, ~15 s of compile time per file) fills them; the
// cmd_*.cpp files run the verbs from them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::cli {

struct TopicListOptions {
  bool json = false;
};

struct TopicInfoOptions {
  std::string topic;
  bool json = false;
};

struct EchoOptions {
  std::string topic;
  std::uint64_t count = 0;  // 0: until interrupted
  bool json = false;
  bool full = false;  // long arrays and sequences in full, not elided
};

struct PubOptions {
  std::string topic;
  std::string value;
  std::uint64_t count = 1;  // 0: until interrupted
  double rate = 10;         // samples per second when count != 1
  // Subscribers to wait for before the first sample; empty: every
  // subscriber and observer ferryd lists once the publisher exists.
  std::optional<std::uint32_t> wait_subscribers;
};

// topic hz measures the rate, topic bw the bandwidth.
enum class Measure { Rate, Bandwidth };

struct RateOptions {
  std::string topic;
  std::size_t window = 0;
  double duration = 0;  // seconds; 0: until interrupted
  bool json = false;
};

struct DelayOptions {
  std::string topic;
  double window_s = 1.0;
  double duration = 0;  // seconds; 0: until interrupted
  bool json = false;
};

struct NodeListOptions {
  bool json = false;
};

struct PoolOptions {
  bool json = false;
};

struct TopOptions {
  std::uint64_t count = 0;  // refreshes; 0: until q or Ctrl-C
};

struct ConfigCheckOptions {
  std::string file;
};

// The flags both bench verbs share, as typed (parsed by ferry_bench).
struct BenchCommonOptions {
  std::vector<std::string> sizes;
  std::vector<std::string> transports;
  std::vector<std::string> cpus;
  std::string wait = "spin";
  int repeat = 3;
  bool json = false;
};

struct BenchRpcOptions {
  std::uint64_t rounds = 20000;
  std::uint32_t repeat = 3;
  std::vector<std::string> cpus;
  bool json = false;
};

struct BenchLatencyOptions {
  BenchCommonOptions common;
  std::uint64_t rounds = 0;  // 0: the default for each size
  double max_run_seconds = 1.0;
};

struct BenchThroughputOptions {
  BenchCommonOptions common;
  double seconds = 1.0;
  std::uint32_t subscribers = 1;
  std::uint32_t batch = 1;  // messages per publish_many / take_many; 1: singly
};

// Defaults as ferry_bench's ScaleOptions.
struct BenchScaleOptions {
  std::uint32_t nodes = 100;
  std::uint32_t topics = 10;
  double idle_seconds = 3.0;
  double traffic_seconds = 2.0;
  std::uint32_t rate_hz = 100;
  int repeat = 1;
  bool json = false;
};

struct BenchFanoutOptions {
  std::vector<std::string> subscribers;  // counts, as typed
  std::vector<std::string> transports;
  std::uint64_t samples = 2000;
  std::int64_t gap_us = 300;
  int repeat = 3;
  bool json = false;
};

struct CleanOptions {
  bool json = false;
};

struct BagInfoOptions {
  std::string file;
  bool json = false;
};

struct GenCppOptions {
  std::string file;
  std::string output;  // empty: standard output
};

struct GenCOptions {
  std::string file;
  std::string output;  // empty: standard output
};

struct GenMsgOptions {
  std::string file;
  std::string type;  // empty: every type
};

struct GenYamlOptions {
  std::vector<std::string> files;  // .msg files
  std::uint64_t max_string = 256;
  std::uint64_t max_sequence = 1024;
  std::string output;  // empty: standard output
};

struct BridgeCliOptions {
  std::optional<std::uint32_t> dds_domain;
  std::vector<std::string> exports, imports;
  double stats_seconds = 5;
  std::uint32_t export_spin_us = 0;
  std::vector<std::string> export_services, import_services;
  std::uint32_t service_timeout_ms = 5000;
};

struct FoxgloveCliOptions {
  std::string address = "127.0.0.1";
  std::uint32_t port = 8765;
  std::vector<std::string> topics;  // globs; empty: every topic
  std::uint32_t max_clients = 16;
  double send_buffer_mib = 32;  // per client
};

struct RecordOptions {
  std::vector<std::string> topics;
  bool all = false;
  std::string output;
  double duration = 0;      // seconds; 0: until interrupted
  std::uint64_t count = 0;  // messages in all; 0: no limit
  std::string compression = "none";
  bool observe = false;  // an observer: never slows a publisher, may miss samples
};

struct PlayOptions {
  std::string file;
  double rate = 1;
  bool loop = false;
  std::vector<std::string> topics;  // empty: all
  double start_offset = 0;          // seconds
  double max_gap = 10;              // seconds of recording between two messages at most; 0: any
};

// ferry service list | info | call (docs/services.md).
struct ServiceListOptions {
  bool json = false;
};

struct ServiceInfoOptions {
  std::string service;
  bool json = false;
};

struct ServiceCallOptions {
  std::string service;
  std::string value;
  std::uint64_t timeout_ms = 1000;
  bool json = false;
};

}  // namespace ferry::cli
