#pragma once
// Bridged services (docs/bridge.md, "Services"): a ferry service carried as
// ROS 2 carries one over Cyclone DDS, in rmw_cyclonedds' wire form. Each
// service, each direction, runs on a thread of its own that sleeps on one
// ferry WaitSet: the ferry port attached, and the DDS reader's
// data_available listener calling notify().
//
//   export: a ferry server serves NAME here; the bridge is a ROS 2 service
//           (reads rq/NAMERequest, answers on rr/NAMEReply) that calls it as
//           a ferry client.
//   import: a ROS 2 service serves NAME in DDS; the bridge is the ferry
//           server of NAME and calls the ROS 2 service as a ROS 2 client.

#include <dds/dds.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ferry/ferry.hpp>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "dds_entity.hpp"
#include "dds_type.hpp"
#include "ferry/bridge/bridge.hpp"
#include "ferry/config/config.hpp"

namespace ferry::bridge {

// rmw_cyclonedds' request header, in front of every request and reply: the
// client's id (the instance handle of its request writer) and its call's
// sequence number, echoed by the service in the reply.
struct RequestHeader {
  std::uint64_t guid;
  std::int64_t seq;
};
inline constexpr std::size_t kRequestHeaderSize = sizeof(RequestHeader);
static_assert(kRequestHeaderSize == 16);

// One DDS sample of a service: the header, then the ferry sample (8-aligned).
inline std::unique_ptr<std::uint64_t[]> sample_buffer(std::size_t payload) {
  return std::make_unique<std::uint64_t[]>((kRequestHeaderSize + payload + 7) / 8);
}
// How often an idle link wakes up (to look at stop and at its DDS peers).
inline constexpr auto kIdleWake = std::chrono::milliseconds(100);

// What a bridged service's DDS side is called.
struct ServiceNames {
  std::string request_topic;  // rq/<name>Request
  std::string reply_topic;    // rr/<name>Reply
  std::string request_type;   // pkg::srv::dds_::Name_Request_
  std::string response_type;  // pkg::srv::dds_::Name_Response_
};
// From the service's name and its request type's ROS 2 name "pkg/msg/X":
// Name is X without a trailing "Request" (or "_Request").
[[nodiscard]] ServiceNames service_names(const config::Config& config,
                                         const config::Service& service);

// Whether an exported service may answer a client (service_match.cpp).
enum class ReplyMatch : std::uint8_t { Yes, NotYet, Gone };
class ReplyReaderCheck {
 public:
  // Yes once `writer` (the reply writer) matched the reply reader of the
  // client whose request writer `reader` knows as `request_writer`, waiting
  // up to `patience` the first time; Gone when that client left.
  ReplyMatch check(dds_entity_t reader, dds_entity_t writer, dds_instance_handle_t request_writer,
                   std::chrono::milliseconds patience);

 private:
  std::unordered_set<dds_instance_handle_t> confirmed_;  // clients answered before
};

// Counters of one bridged service: relaxed atomics (statistics, read by the
// printer while the link's thread writes them).
struct ServiceCounters {
  std::atomic<std::uint64_t> calls{0};     // requests taken (DDS or ferry)
  std::atomic<std::uint64_t> answered{0};  // responses passed on
  std::atomic<std::uint64_t> failed{0};    // calls that ended without a response
  std::atomic<std::uint64_t> stray{0};     // responses for no call of ours (late, or not decodable)
};

// The kinds of failure OnceLog tells apart besides the ErrorCodes (which are
// below these).
enum LinkFailure : unsigned {
  kDdsWriteFailed = 56,  // DDS refused a write
  kDdsClientLeft,        // export: the DDS client left before its answer
  kReplyNotMatched,      // export: the DDS client's reply reader did not match in time
  kNoDdsServer,          // import: no DDS server matched
  kDdsServerGone,        // import: the DDS server left with calls in flight
  kDdsTimeout,           // import: the DDS server did not answer in time
};

// Logs the first time each kind of failure happens (then only counts it),
// and again once it happened after a recovery (`recovered()`).
class OnceLog {
 public:
  // True the first time `kind` (an ErrorCode or another small number) is seen.
  bool first(unsigned kind) noexcept {
    if (kind >= 64) kind = 63;
    const std::uint64_t bit = std::uint64_t{1} << kind;
    const bool is_first = (seen_ & bit) == 0;
    seen_ |= bit;
    return is_first;
  }
  void recovered(unsigned kind) noexcept {
    seen_ &= ~(std::uint64_t{1} << (kind >= 64 ? 63 : kind));
  }

 private:
  std::uint64_t seen_ = 0;
};

// One direction of one service: its DDS endpoints, its ferry port and its
// thread. Made and started by ServiceBridges.
class ServiceLink {
 public:
  ServiceLink(const config::Config& config, const config::Service& service, bool is_export,
              dds_entity_t participant, std::chrono::milliseconds call_timeout, std::uint32_t id);
  ~ServiceLink();
  ServiceLink(const ServiceLink&) = delete;
  ServiceLink& operator=(const ServiceLink&) = delete;

  // Makes the ferry port (on `node`, on the calling thread) and starts the thread.
  void start(ferry::Node& node);
  // Stops and joins the thread; the DDS listener is gone after it.
  void stop();
  // One line of counts, as `ferry bridge` prints them.
  [[nodiscard]] std::string counts() const;

  // What the thread runs (service_export.cpp / service_import.cpp).
  void run_export();
  void run_import();

 private:
  static void on_data(dds_entity_t reader, void* arg);
  void fail(unsigned kind, const std::string& sentence);

  const config::Service& service_;
  bool is_export_;
  std::chrono::milliseconds call_timeout_;
  std::size_t request_size_;
  std::size_t response_size_;
  ServiceNames names_;
  DdsType request_type_, response_type_;
  DdsEntity request_topic_, reply_topic_;
  DdsEntity writer_, reader_;  // export: reply writer, request reader; import: the reverse
  std::unique_ptr<ferry::detail::ClientCore> client_;  // export
  std::unique_ptr<ferry::detail::ServerCore> server_;  // import
  ferry::WaitSet wait_set_;
  // SYNC: relaxed; a stop flag polled by the thread, which notify() wakes;
  // join() orders the rest.
  std::atomic<bool> stop_{false};
  ServiceCounters counters_;
  OnceLog once_;
  std::jthread thread_;
};

// Every bridged service of one bridge.
class ServiceBridges {
 public:
  ServiceBridges(const config::Config& config, const Options& options, dds_entity_t participant);
  ~ServiceBridges();
  ServiceBridges(const ServiceBridges&) = delete;
  ServiceBridges& operator=(const ServiceBridges&) = delete;

  void start(ferry::Node& node);
  void stop();
  void print_counts(const char* when) const;
  [[nodiscard]] bool empty() const noexcept { return links_.empty(); }

 private:
  std::list<ServiceLink> links_;  // stable addresses: listeners and threads hold them
};

}  // namespace ferry::bridge
