#pragma once
// The I/O thread's state: the listening socket, the sessions, the channels
// as the taking thread announced them, and how many clients subscribe to
// each (the taking thread streams exactly those).

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "client_publisher.hpp"
#include "events.hpp"
#include "ferry/foxglove/server.hpp"
#include "session.hpp"
#include "topic_pump.hpp"

namespace ferry::foxglove {

// A client message larger than this closes its connection (1009, message
// too big): a 1080p RGB image and its header fit.
inline constexpr std::size_t kMaxClientMessage = std::size_t{16} << 20;
// Control messages (advertise, status) waiting for a client that does not
// read them: past this it is closed.
inline constexpr std::size_t kMaxControlBytes = std::size_t{8} << 20;
// Status messages waiting for one client; more are dropped (and counted).
inline constexpr std::size_t kMaxQueuedStatuses = 64;
// A connection has this long to send its HTTP upgrade request.
inline constexpr std::chrono::seconds kHandshakeTimeout{10};
// Connections that have not upgraded yet, beyond the clients.
inline constexpr std::size_t kMaxPendingConnections = 64;
// After a failed accept (EMFILE...), the pause before the next.
inline constexpr std::chrono::milliseconds kAcceptRetry{100};

struct Channel {
  ChannelDescription description;
  std::shared_ptr<const TopicCoding> coding;
};

class Server {
 public:
  Server(boost::asio::io_context& io, const Options& options, TopicPump& pump,
         ClientPublisher& publisher, EventHandoff& events);

  // Binds and listens; returns the port.
  std::uint16_t listen();
  // Stops accepting and closes every session (going away).
  void stop();

  // What the taking thread handed over.
  void drain();

  // Session hooks.
  [[nodiscard]] const Options& options() const noexcept { return options_; }
  [[nodiscard]] boost::asio::io_context& io() noexcept { return io_; }
  [[nodiscard]] ClientPublisher& publisher() noexcept { return publisher_; }
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }
  // Whether a client may join now (max_clients).
  [[nodiscard]] bool has_room() const noexcept { return joined_ < options_.max_clients; }
  // The session upgraded: it gets serverInfo and the advertised channels.
  void join(const std::shared_ptr<Session>& session);
  void leave(Session& session);
  [[nodiscard]] const Channel* channel(ChannelId id) const;
  [[nodiscard]] const Channel* channel_of_topic(const std::string& topic) const;
  void add_interest(ChannelId id);
  void drop_interest(ChannelId id);

 private:
  void accept_next();
  void tell_pump();

  boost::asio::io_context& io_;
  const Options& options_;
  TopicPump& pump_;
  ClientPublisher& publisher_;
  EventHandoff& events_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  std::string session_id_;
  std::uint64_t next_session_ = 1;
  std::size_t joined_ = 0;
  bool stopping_ = false;
  std::set<std::shared_ptr<Session>> sessions_;  // connected (upgraded or not)
  std::map<ChannelId, Channel> channels_;
  std::map<ChannelId, std::size_t> interest_;  // subscribing clients per channel
};

}  // namespace ferry::foxglove
