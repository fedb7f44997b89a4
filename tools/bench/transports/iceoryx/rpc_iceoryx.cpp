#include "transports/iceoryx/rpc_iceoryx.hpp"

#include <atomic>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "iceoryx_posh/popo/client.hpp"
#include "iceoryx_posh/popo/server.hpp"
#include "transports/iceoryx/iceoryx_roudi.hpp"
#include "transports/iceoryx/iceoryx_side.hpp"

namespace ferry::bench {

namespace {

struct Message {
  std::uint64_t n;
  std::uint8_t pad[56];
};

iox::capro::ServiceDescription rpc_service(std::uint64_t run) {
  return iceoryx_service(run, "rpc");
}

constexpr std::int64_t kWaitNs = 10'000'000'000;

}  // namespace

std::shared_ptr<RouDi> start_rpc_roudi(const std::filesystem::path& dir, std::string& error) {
  const std::uint64_t sizes[] = {sizeof(Message)};
  auto r = RouDi::start(dir, iceoryx_latency_pools(sizes));
  if (!r) {
    error = r.error();
    return nullptr;
  }
  return std::shared_ptr<RouDi>(std::move(*r));
}

int iceoryx_rpc_server(const std::string& runtime_name, std::uint64_t run,
                       const std::atomic<bool>& stop) {
  join_iceoryx(runtime_name);
  {
    iox::popo::Server<Message, Message> server(rpc_service(run));
    // SYNC: relaxed; a flag in a shared mapping, set by the client side
    // when it is done; nothing is published through it.
    while (!stop.load(std::memory_order_relaxed)) {
      server.take().and_then([&](const auto& request) {
        server.loan(request).and_then([&](auto& response) {
          response->n = request->n + 1;
          (void)response.send();
        });
      });
    }
  }
  leave_iceoryx();
  return 0;
}

int iceoryx_rpc_client(const std::string& runtime_name, std::uint64_t run, std::uint64_t warmup,
                       std::uint64_t rounds, std::int64_t* round_trip_ns) {
  join_iceoryx(runtime_name);
  int code = 0;
  {
    iox::popo::Client<Message, Message> client(rpc_service(run));
    const std::int64_t connect_end = now_ns() + kWaitNs;
    while (client.getConnectionState() != iox::ConnectionState::CONNECTED) {
      if (now_ns() > connect_end) return 2;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    for (std::uint64_t i = 0; i < warmup + rounds && code == 0; ++i) {
      const std::int64_t start = now_ns();
      bool sent = false;
      client.loan().and_then([&](auto& request) {
        request.getRequestHeader().setSequenceId(static_cast<std::int64_t>(i));
        request->n = i;
        sent = !request.send().has_error();
      });
      if (!sent) {
        code = 3;
        break;
      }
      bool got = false;
      const std::int64_t deadline = start + kWaitNs;
      while (!got) {
        client.take().and_then([&](const auto& response) {
          got = response->n == i + 1;
          if (!got) code = 4;
        });
        if (code != 0) break;
        if (!got && now_ns() > deadline) {
          code = 5;
          break;
        }
      }
      const std::int64_t end = now_ns();
      if (i >= warmup) round_trip_ns[i - warmup] = end - start;
    }
  }
  leave_iceoryx();
  return code;
}

}  // namespace ferry::bench
