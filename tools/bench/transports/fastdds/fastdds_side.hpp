#pragma once
// What the Fast DDS comparator's sides share: a participant as ROS 2
// configures one (Fast DDS's built-in transports, shared memory and UDPv4;
// data-sharing on automatic), in a domain of the invocation's own; reliable
// writers and readers of the bench's plain byte type (fastdds_type.hpp) on a
// run's topic; writing a loaned sample; taking loaned samples one at a time,
// polling or waiting. Only transports/fastdds/ includes Fast DDS's headers.
// Every entity is made in the forked side (Fast DDS's threads do not
// survive a fork), never in the orchestrator.

#include <cstddef>
#include <cstdint>
#include <fastdds/dds/core/LoanableSequence.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <memory>
#include <string>

#include "ferry/bench/options.hpp"
#include "harness/run_control.hpp"

namespace ferry::bench {

// How long a side waits to discover its peers before it gives up.
inline constexpr std::int64_t kDdsMatchTimeoutNs = 10'000'000'000;

// Fast DDS's domain for this invocation's runs: 1..100 from the
// orchestrator's pid (the topic names, which carry the pid, keep the runs
// of two invocations apart when they share one).
[[nodiscard]] std::uint32_t fastdds_domain_for(int orchestrator_pid) noexcept;

// How deep a writer's and a reader's history are: a few samples of a frame
// (each one a chunk of the writer's data-sharing pool), many small ones.
[[nodiscard]] std::int32_t fastdds_depth(std::uint64_t size, bool keep_all) noexcept;

// A Fast DDS duration of `ns` nanoseconds.
[[nodiscard]] eprosima::fastrtps::Duration_t fastdds_duration(std::int64_t ns);
using eprosima::fastrtps::types::ReturnCode_t;

class FastNode {
 public:
  // A participant with the type of `size` bytes registered; null with the
  // reason in `error` on failure. Fast DDS's log goes to stderr, errors only.
  [[nodiscard]] static std::unique_ptr<FastNode> join(std::uint32_t domain, std::uint64_t size,
                                                      std::string& error);
  ~FastNode();  // deletes every entity, then the participant
  FastNode(const FastNode&) = delete;
  FastNode& operator=(const FastNode&) = delete;

  // Reliable, volatile, data-sharing automatic; `keep_all`: a writer blocks
  // (up to kPeerTimeoutNs) while its history is full, nothing is lost.
  // Null (with `error`) on failure. Owned by the node.
  eprosima::fastdds::dds::DataWriter* writer(const std::string& topic, bool keep_all,
                                             std::string& error);
  eprosima::fastdds::dds::DataReader* reader(const std::string& topic, bool keep_all,
                                             std::string& error);

 private:
  FastNode() = default;
  eprosima::fastdds::dds::Topic* topic(const std::string& name, std::string& error);
  eprosima::fastdds::dds::DomainParticipant* participant_ = nullptr;
  eprosima::fastdds::dds::Publisher* publisher_ = nullptr;
  eprosima::fastdds::dds::Subscriber* subscriber_ = nullptr;
  std::string type_name_;
  std::uint64_t size_ = 0;
};

// Waits until the writer (or reader) matched `count` peers; false after
// `timeout_ns`.
[[nodiscard]] bool fastdds_matched(eprosima::fastdds::dds::DataWriter* writer, std::uint32_t count,
                                   std::int64_t timeout_ns);
[[nodiscard]] bool fastdds_matched(eprosima::fastdds::dds::DataReader* reader, std::uint32_t count,
                                   std::int64_t timeout_ns);

// Loans a sample from the writer (waiting, up to kPeerTimeoutNs, while
// every one is in use: the writer's history is full), writes `seq` into
// its first 8 bytes and writes it. Reports failure to `control`.
[[nodiscard]] bool fastdds_write(eprosima::fastdds::dds::DataWriter* writer, std::uint64_t seq,
                                 RunControl& control, const char* who);

// Takes a reader's samples, loaned, up to 64 at a time, and hands them out
// one by one; waits in wait_for_unread_message at every --wait: Fast DDS
// delivers through its own threads, from which a polling side would only
// take CPU (docs/benchmarks.md).
class FastTaker {
 public:
  explicit FastTaker(eprosima::fastdds::dds::DataReader* reader) : reader_(reader) {}
  ~FastTaker();
  FastTaker(const FastTaker&) = delete;
  FastTaker& operator=(const FastTaker&) = delete;
  // The next sample's bytes (the type's size), valid until the next call;
  // null (reported) when none came within kPeerTimeoutNs or taking failed.
  const std::byte* next(RunControl& control, const char* who);

 private:
  struct Head {
    std::uint64_t seq;
  };
  void give_back() noexcept;
  eprosima::fastdds::dds::DataReader* reader_;
  eprosima::fastdds::dds::LoanableSequence<Head> data_;
  eprosima::fastdds::dds::SampleInfoSeq infos_;
  bool loaned_ = false;
  std::int32_t at_ = 0;
};

}  // namespace ferry::bench
