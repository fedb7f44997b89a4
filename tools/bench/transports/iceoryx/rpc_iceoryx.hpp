#pragma once
// iceoryx 2.0's request/response (popo::Client / popo::Server) for `ferry
// bench rpc`: its two sides and its RouDi. This header includes nothing of
// iceoryx, so that rpc/ stays free of its headers.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ferry::bench {

class RouDi;

// Starts a RouDi for the run in `dir` (64-byte calls); its error sentence
// in `error` when it cannot.
[[nodiscard]] std::shared_ptr<RouDi> start_rpc_roudi(const std::filesystem::path& dir,
                                                     std::string& error);

// The sides (forked): the server answers until `stop`; the client makes
// warm-up plus `rounds` calls, each round trip in `round_trip_ns`. 0: ok.
int iceoryx_rpc_server(const std::string& runtime_name, std::uint64_t run,
                       const std::atomic<bool>& stop);
int iceoryx_rpc_client(const std::string& runtime_name, std::uint64_t run, std::uint64_t warmup,
                       std::uint64_t rounds, std::int64_t* round_trip_ns);

}  // namespace ferry::bench
