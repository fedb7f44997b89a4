// Export: the bridge is a ROS 2 service in DDS, and a ferry client of the
// local server. A DDS request (header + request) becomes a ferry call; its
// response goes back on the reply topic with the request's header, which the
// ROS 2 client matches to its call (rmw_cyclonedds: the guid is its request
// writer's, the sequence number its call's).
//
// Calls in flight at most: the service's capacity. Requests beyond wait in
// the DDS reader (KEEP_ALL up to a limit, then DDS holds the writer back).
// A call that fails (no ferry server, timeout, server gone, NoResponse) is
// not answered: ROS 2 has no error reply, its client's own timeout ends it.
#include <spdlog/spdlog.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ferry/detail/service_core.hpp"
#include "ferry/error_name.hpp"
#include "service_link.hpp"

namespace ferry::bridge {

namespace {

constexpr unsigned kNoServerKind = static_cast<unsigned>(ErrorCode::NoServer);
// How long a first answer to a DDS client waits for its reply reader to
// match (rmw_cyclonedds waits 100 ms too).
constexpr auto kReplyPatience = std::chrono::milliseconds(100);

}  // namespace

void ServiceLink::run_export() {
  struct Call {
    ferry::detail::ClientCore::Sent sent;
    RequestHeader header;
    dds_instance_handle_t request_writer;  // the DDS client's
    std::chrono::steady_clock::time_point deadline;
    bool busy = false;
  };
  detail::ClientCore& client = *client_;
  std::vector<Call> calls(client.capacity());
  std::vector<std::unique_ptr<std::uint64_t[]>> requests;
  std::vector<void*> request_ptrs;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    requests.push_back(sample_buffer(request_size_));
    request_ptrs.push_back(requests.back().get());
  }
  std::vector<dds_sample_info_t> infos(calls.size());
  const auto reply = sample_buffer(response_size_);
  auto* reply_bytes = reinterpret_cast<std::byte*>(reply.get());
  bool had_server = true;
  ReplyReaderCheck reply_check;

  // SYNC: relaxed; pairs with the store in stop(): a stop flag only.
  while (!stop_.load(std::memory_order_relaxed)) {
    // Answers and failures of the calls in flight.
    const auto now = std::chrono::steady_clock::now();
    auto wake = now + kIdleWake;
    bool wrote = false;
    for (Call& c : calls) {
      if (!c.busy) continue;
      detail::TakenSample taken;
      ErrorCode error{};
      switch (client.take(c.sent, std::chrono::nanoseconds::zero(), taken, error)) {
        case detail::ClientCore::Outcome::Taken: {
          std::memcpy(reply_bytes, &c.header, kRequestHeaderSize);
          std::memcpy(reply_bytes + kRequestHeaderSize, taken.data, response_size_);
          detail::release_held(client.held(), taken.token);
          c.busy = false;
          const ReplyMatch match =
              reply_check.check(reader_.get(), writer_.get(), c.request_writer, kReplyPatience);
          if (match != ReplyMatch::Yes) {
            fail(match == ReplyMatch::Gone ? kDdsClientLeft : kReplyNotMatched,
                 match == ReplyMatch::Gone
                     ? std::string("a DDS client left before its answer came; it is dropped")
                     : fmt::format("the reply reader of a DDS client did not match within {} ms; "
                                   "its answer is dropped",
                                   kReplyPatience.count()));
            break;
          }
          const dds_return_t rc = dds_write(writer_.get(), reply.get());
          if (rc == DDS_RETCODE_OK) {
            wrote = true;
            // SYNC: relaxed; a statistic.
            counters_.answered.fetch_add(1, std::memory_order_relaxed);
          } else {
            fail(kDdsWriteFailed, fmt::format("DDS did not take a reply on '{}': {}",
                                              names_.reply_topic, dds_strretcode(rc)));
          }
          break;
        }
        case detail::ClientCore::Outcome::Failed:
          c.busy = false;
          fail(static_cast<unsigned>(error),
               fmt::format("a call to the local server failed ({}); its DDS request is not "
                           "answered",
                           name_of(error)));
          break;
        case detail::ClientCore::Outcome::Empty:
          if (now >= c.deadline) {
            client.abandon(c.sent);
            c.busy = false;
            fail(static_cast<unsigned>(ErrorCode::Timeout),
                 fmt::format("the local server did not answer within {} ms (--service-timeout-ms); "
                             "its DDS request is not answered",
                             call_timeout_.count()));
          } else {
            wake = std::min(wake, c.deadline);
          }
          break;
      }
    }
    // The bridge's Cyclone batches writes (bridge.cpp, cyclone_config()): out now.
    if (wrote) dds_write_flush(writer_.get());
    client.drain();  // late responses: counted by the client, dropped

    // New DDS requests, as many as calls may start.
    std::uint32_t free = 0;
    for (const Call& c : calls) free += c.busy ? 0 : 1;
    const dds_return_t n =
        free == 0 ? 0 : dds_take(reader_.get(), request_ptrs.data(), infos.data(), free, free);
    std::size_t next = 0;
    for (dds_return_t i = 0; i < n; ++i) {
      if (!infos[static_cast<std::size_t>(i)].valid_data) continue;
      // SYNC: relaxed; a statistic.
      counters_.calls.fetch_add(1, std::memory_order_relaxed);
      const auto* bytes =
          reinterpret_cast<const std::byte*>(request_ptrs[static_cast<std::size_t>(i)]);
      const bool has_server = client.has_server();
      if (has_server && !had_server) {
        spdlog::info("bridge: service '{}' (export): the local server is back", service_.name);
        once_.recovered(kNoServerKind);
      }
      had_server = has_server;
      auto sent =
          client.send(bytes + kRequestHeaderSize, static_cast<std::uint32_t>(request_size_));
      if (!sent) {
        fail(static_cast<unsigned>(sent.error()),
             fmt::format("a DDS request could not be passed on ({}); it is not answered",
                         name_of(sent.error())));
        continue;
      }
      while (calls[next].busy) ++next;  // a free one exists: at most `free` were taken
      Call& c = calls[next];
      std::memcpy(&c.header, bytes, kRequestHeaderSize);
      c.request_writer = infos[static_cast<std::size_t>(i)].publication_handle;
      c.sent = *sent;
      c.deadline = std::chrono::steady_clock::now() + call_timeout_;
      c.busy = true;
    }
    if (n > 0) continue;  // more may wait in the reader
    (void)wait_set_.wait(std::max(std::chrono::nanoseconds(wake - std::chrono::steady_clock::now()),
                                  std::chrono::nanoseconds(0)));
  }
  for (Call& c : calls)
    if (c.busy) client.abandon(c.sent);
}

}  // namespace ferry::bridge
