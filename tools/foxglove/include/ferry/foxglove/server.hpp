#pragma once
// ferry foxglove (docs/foxglove.md): a domain served over the Foxglove
// WebSocket protocol (subprotocol foxglove.websocket.v1), so that Foxglove
// and Lichtblick show it live. Every topic is a channel with encoding `cdr`,
// schema encoding `ros2msg` and the schema text ferry writes into MCAP
// files; samples are taken as an observer, so a client never slows a
// publisher. Boost.Beast stays inside tools/foxglove/src.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ferry/config/config.hpp"
#include "ferry/discovery/messages.hpp"

namespace ferry::foxglove {

// A setup problem (the address cannot be listened on): one sentence.
class FoxgloveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string domain;  // the ferry domain (its Node joins it)
  std::string address = "127.0.0.1";
  std::uint16_t port = 8765;  // 0: any free port (on_listening names it)
  // Only topics matching one of these globs (fnmatch: `camera/*`); empty: all.
  std::vector<std::string> topics;
  std::size_t max_clients = 16;
  // Per client: the bytes of messages waiting to be sent; past it the
  // oldest messages of the channels holding the most are dropped.
  std::size_t send_buffer = std::size_t{32} << 20;
  // How often ferryd is asked for topics that appeared or went away.
  std::chrono::milliseconds poll_topics{500};
  // Rate limit of the "messages dropped" status sent to a slow client.
  std::chrono::milliseconds drop_report_every{1000};
  std::string node_name = "ferry-foxglove";
};

// What the server asks ferryd (the CLI connects and pages; these may throw
// std::exception, which the server logs and retries at the next poll).
struct DomainQueries {
  std::function<std::vector<discovery::TopicInfo>()> list_topics;
  // Asked again when a topic names a type the last configuration lacks
  // (ferryd re-read its YAML).
  std::function<config::Config()> fetch_config;
};

// Serves until SIGINT or SIGTERM. `on_listening` is called once the port is
// bound, with the port (the URL to open). Throws FoxgloveError when the
// address cannot be listened on, ferry::Error when the domain cannot be
// joined.
void run(const Options& options, const DomainQueries& queries,
         const std::function<void(std::uint16_t port)>& on_listening);

}  // namespace ferry::foxglove
