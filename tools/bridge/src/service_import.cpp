// Import: a ROS 2 service serves in DDS; the bridge is the ferry server of
// the service and calls the ROS 2 service as a ROS 2 client would
// (rmw_cyclonedds): each request is written with the header (the instance
// handle of the bridge's request writer, a sequence number counting from 1),
// and of the replies, which every client of the service reads, only those
// with the bridge's guid and a sequence number of a call in flight answer a
// ferry call.
//
// Failures answer the ferry call NoResponse at once: no DDS server matched
// (its request reader and reply writer), the DDS server gone while the call
// was in flight, no reply within --service-timeout-ms.
#include <spdlog/spdlog.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ferry/detail/service_core.hpp"
#include "ferry/error_name.hpp"
#include "service_link.hpp"

namespace ferry::bridge {

namespace {

constexpr std::uint32_t kRepliesAtOnce = 16;

}  // namespace

void ServiceLink::run_import() {
  struct Call {
    std::int64_t seq;
    std::uint64_t client;    // the ferry client (its way back is looked up when answering)
    std::uint64_t sequence;  // the ferry call's
    std::chrono::steady_clock::time_point deadline;
  };
  detail::ServerCore& server = *server_;
  std::vector<Call> calls;  // in flight, oldest first
  calls.reserve(64);
  dds_instance_handle_t guid = 0;
  if (const dds_return_t rc = dds_get_instance_handle(writer_.get(), &guid); rc != DDS_RETCODE_OK)
    throw BridgeError(std::string("cannot read the instance handle of the request writer: ") +
                      dds_strretcode(rc));
  std::int64_t next_seq = 0;
  const auto request = sample_buffer(request_size_);
  auto* request_bytes = reinterpret_cast<std::byte*>(request.get());
  std::vector<std::unique_ptr<std::uint64_t[]>> replies;
  std::vector<void*> reply_ptrs;
  for (std::uint32_t i = 0; i < kRepliesAtOnce; ++i) {
    replies.push_back(sample_buffer(response_size_));
    reply_ptrs.push_back(replies.back().get());
  }
  std::vector<dds_sample_info_t> infos(kRepliesAtOnce);
  bool had_server = false;

  const auto dds_server = [&] {
    dds_publication_matched_status_t w{};
    dds_subscription_matched_status_t r{};
    return dds_get_publication_matched_status(writer_.get(), &w) == DDS_RETCODE_OK &&
           dds_get_subscription_matched_status(reader_.get(), &r) == DDS_RETCODE_OK &&
           w.current_count > 0 && r.current_count > 0;
  };
  const auto no_response = [&](const Call& c) {
    detail::ServerCore::respond_none(server.known_responder(c.client), c.sequence);
  };

  // SYNC: relaxed; pairs with the store in stop(): a stop flag only.
  while (!stop_.load(std::memory_order_relaxed)) {
    const bool has_server = dds_server();
    if (has_server != had_server) {
      spdlog::info("bridge: service '{}' (import): {} DDS server on '{}'", service_.name,
                   has_server ? "a" : "no", names_.request_topic);
      if (has_server) {
        once_.recovered(kNoDdsServer);
        once_.recovered(kDdsServerGone);
      }
    }
    had_server = has_server;
    if (!has_server && !calls.empty()) {
      fail(kDdsServerGone,
           fmt::format("the DDS server left with {} call(s) in flight; they answer NoResponse",
                       calls.size()));
      for (const Call& c : calls) no_response(c);
      // SYNC: relaxed; a statistic (fail() counted one).
      counters_.failed.fetch_add(calls.size() - 1, std::memory_order_relaxed);
      calls.clear();
    }

    // Replies: ours (guid) to a call in flight (seq); the rest is another
    // client's or late.
    const dds_return_t n =
        dds_take(reader_.get(), reply_ptrs.data(), infos.data(), kRepliesAtOnce, kRepliesAtOnce);
    for (dds_return_t i = 0; i < n; ++i) {
      if (!infos[static_cast<std::size_t>(i)].valid_data) continue;
      const auto* bytes =
          reinterpret_cast<const std::byte*>(reply_ptrs[static_cast<std::size_t>(i)]);
      RequestHeader header{};
      std::memcpy(&header, bytes, kRequestHeaderSize);
      if (header.guid != guid) continue;
      auto it = std::find_if(calls.begin(), calls.end(),
                             [&](const Call& c) { return c.seq == header.seq; });
      if (it == calls.end()) {
        // SYNC: relaxed; a statistic.
        counters_.stray.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      (void)detail::ServerCore::respond(server.known_responder(it->client), it->sequence,
                                        bytes + kRequestHeaderSize,
                                        static_cast<std::uint32_t>(response_size_));
      calls.erase(it);
      // SYNC: relaxed; a statistic.
      counters_.answered.fetch_add(1, std::memory_order_relaxed);
    }

    // Calls past their time.
    const auto now = std::chrono::steady_clock::now();
    auto wake = now + kIdleWake;
    std::erase_if(calls, [&](const Call& c) {
      if (now < c.deadline) {
        wake = std::min(wake, c.deadline);
        return false;
      }
      no_response(c);
      fail(kDdsTimeout, fmt::format("the DDS server did not answer within {} ms "
                                    "(--service-timeout-ms); the call answers NoResponse",
                                    call_timeout_.count()));
      return true;
    });

    // New ferry requests.
    bool took = false;
    for (;;) {
      detail::TakenSample taken;
      detail::PublisherPort* responder = nullptr;
      ErrorCode error{};
      const auto status = server.take(taken, responder, error, std::chrono::nanoseconds::zero());
      if (status == detail::TakeStatus::Failed) {
        fail(static_cast<unsigned>(error),
             fmt::format("taking a request failed ({})", name_of(error)));
        break;
      }
      if (status != detail::TakeStatus::Taken) break;
      took = true;
      // SYNC: relaxed; a statistic.
      counters_.calls.fetch_add(1, std::memory_order_relaxed);
      const auto info = server.held()->info(taken.token);
      const std::uint64_t sequence = info.sequence;
      const RequestHeader header{guid, ++next_seq};
      std::memcpy(request_bytes, &header, kRequestHeaderSize);
      std::memcpy(request_bytes + kRequestHeaderSize, taken.data, request_size_);
      detail::release_held(server.held(), taken.token);
      if (!has_server) {
        fail(kNoDdsServer, fmt::format("no DDS server matched on '{}' and '{}': calls answer "
                                       "NoResponse until one is",
                                       names_.request_topic, names_.reply_topic));
        detail::ServerCore::respond_none(responder, sequence);
        continue;
      }
      if (const dds_return_t rc = dds_write(writer_.get(), request.get()); rc != DDS_RETCODE_OK) {
        detail::ServerCore::respond_none(responder, sequence);
        fail(kDdsWriteFailed,
             fmt::format("DDS did not take a request on '{}' ({}): the call answers "
                         "NoResponse",
                         names_.request_topic, dds_strretcode(rc)));
        continue;
      }
      calls.push_back(Call{header.seq, info.publisher_id, sequence,
                           std::chrono::steady_clock::now() + call_timeout_});
    }
    // The bridge's Cyclone batches writes (bridge.cpp, cyclone_config()): out now.
    if (took) dds_write_flush(writer_.get());
    if (took || n > 0) continue;
    (void)wait_set_.wait(std::max(std::chrono::nanoseconds(wake - std::chrono::steady_clock::now()),
                                  std::chrono::nanoseconds(0)));
  }
  for (const Call& c : calls) no_response(c);
}

}  // namespace ferry::bridge
