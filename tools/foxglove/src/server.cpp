// ferry foxglove's server: one I/O thread (this one) runs every socket on an
// io_context; the taking thread (TopicPump) and the publishing thread
// (ClientPublisher) talk to it through EventHandoff and posted handlers.
#include "ferry/foxglove/server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <ferry/ferry.hpp>
#include <thread>

#include "server_core.hpp"

namespace ferry::foxglove {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {
// Payload bytes the taking thread may hand over before the I/O thread took
// them: a few 1080p frames.
constexpr std::size_t kHandoffBytes = std::size_t{16} << 20;
// How long sessions get to close when the server stops.
constexpr std::chrono::seconds kStopGrace{2};
}  // namespace

Server::Server(asio::io_context& io, const Options& options, TopicPump& pump,
               ClientPublisher& publisher, EventHandoff& events)
    : io_(io),
      options_(options),
      pump_(pump),
      publisher_(publisher),
      events_(events),
      acceptor_(io),
      accept_retry_(io),
      session_id_(std::to_string(std::chrono::system_clock::now().time_since_epoch() /
                                 std::chrono::milliseconds(1))) {}

std::uint16_t Server::listen() {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options_.address, ec);
  if (ec)
    throw FoxgloveError(
        fmt::format("--address '{}' is not an IP address ({})", options_.address, ec.message()));
  const tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw FoxgloveError(
        fmt::format("cannot listen on {}:{}: {}", options_.address, options_.port, ec.message()));
  accept_next();
  return acceptor_.local_endpoint().port();
}

void Server::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // E.g. EMFILE: the connection stays in the backlog and accepting
      // again at once would fail at once, in a loop. Wait a little.
      spdlog::warn("foxglove: accept failed: {}; trying again in {} ms", ec.message(),
                   kAcceptRetry.count());
      accept_retry_.expires_after(kAcceptRetry);
      accept_retry_.async_wait([this](boost::system::error_code e) {
        if (!e) accept_next();
      });
      return;
    }
    if (sessions_.size() >= options_.max_clients + kMaxPendingConnections) {
      // Connections that have not upgraded yet (each has kHandshakeTimeout)
      // are bounded too: beyond them a connection is closed at once.
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto session = std::make_shared<Session>(*this, std::move(socket), next_session_++);
      sessions_.insert(session);
      session->start();
    }
    accept_next();
  });
}

void Server::stop() {
  if (stopping_) return;
  stopping_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  const auto sessions = sessions_;  // close() may leave()
  for (const auto& s : sessions)
    s->close(boost::beast::websocket::close_code::going_away, "ferry foxglove is stopping");
  if (sessions_.empty()) io_.stop();
}

void Server::join(const std::shared_ptr<Session>& session) {
  ++joined_;
  std::vector<ChannelDescription> all;
  all.reserve(channels_.size());
  for (const auto& [id, c] : channels_) all.push_back(c.description);
  session->send_text(server_info_json(fmt::format("ferry foxglove (domain '{}')", options_.domain),
                                      session_id_, options_.domain));
  session->send_text(advertise_json(all));
}

void Server::leave(Session& session) {
  if (session.joined()) --joined_;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == &session) {
      sessions_.erase(it);
      break;
    }
  }
  if (stopping_ && sessions_.empty()) io_.stop();  // the last one closed: done
}

const Channel* Server::channel(ChannelId id) const {
  const auto it = channels_.find(id);
  return it == channels_.end() ? nullptr : &it->second;
}

const Channel* Server::channel_of_topic(const std::string& topic) const {
  for (const auto& [id, c] : channels_)
    if (c.description.topic == topic) return &c;
  return nullptr;
}

void Server::add_interest(ChannelId id) {
  if (interest_[id]++ == 0) tell_pump();
}

void Server::drop_interest(ChannelId id) {
  const auto it = interest_.find(id);
  if (it == interest_.end()) return;
  if (--it->second == 0) {
    interest_.erase(it);
    tell_pump();
  }
}

void Server::tell_pump() {
  std::set<ChannelId> wanted;
  for (const auto& [id, n] : interest_) wanted.insert(id);
  pump_.want(std::move(wanted));
}

void Server::drain() {
  for (PumpEvent& event : events_.take()) {
    if (auto* m = std::get_if<OutMessage>(&event)) {
      for (const auto& s : sessions_) s->deliver(*m);
    } else if (auto* added = std::get_if<ChannelAdded>(&event)) {
      const ChannelId id = added->description.id;
      const std::string text = advertise_json(std::span(&added->description, 1));
      channels_[id] = Channel{std::move(added->description), std::move(added->coding)};
      for (const auto& s : sessions_)
        if (s->joined()) s->send_text(text);
    } else if (auto* removed = std::get_if<ChannelRemoved>(&event)) {
      const std::string text = unadvertise_json(std::span(&removed->id, 1));
      const auto sessions = sessions_;
      for (const auto& s : sessions) {
        s->channel_removed(removed->id);
        if (s->joined()) s->send_text(text);
      }
      channels_.erase(removed->id);
      interest_.erase(removed->id);
    } else if (auto* failed = std::get_if<SubscribeFailed>(&event)) {
      for (const auto& s : sessions_) s->subscribe_failed(failed->id, failed->why);
    }
  }
}

void run(const Options& options, const DomainQueries& queries,
         const std::function<void(std::uint16_t port)>& on_listening) {
  Node node{options.node_name, NodeOptions{.domain = options.domain}};
  asio::io_context io{1};
  EventHandoff events(kHandoffBytes);
  TopicPump pump(node, options, queries, events);
  ClientPublisher publisher(node);
  Server server(io, options, pump, publisher, events);
  events.set_wake([&io, &server] { asio::post(io, [&server] { server.drain(); }); });
  const std::uint16_t port = server.listen();
  pump.poll();  // the first clients see every topic
  pump.apply_offered();
  // Before on_listening: from then on Ctrl-C stops the server cleanly.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer grace(io);
  if (on_listening) on_listening(port);

  std::thread pump_thread([&pump] { pump.run(); });
  std::thread poll_thread([&pump] { pump.run_poller(); });
  std::thread publish_thread([&publisher] { publisher.run(); });

  signals.async_wait([&](boost::system::error_code ec, int signal) {
    if (ec) return;
    spdlog::info("foxglove: stopping ({})", signal == SIGINT ? "SIGINT" : "SIGTERM");
    server.stop();
    pump.stop();
    publisher.stop();
    // Clients that do not answer the close in time are cut.
    grace.expires_after(kStopGrace);
    grace.async_wait([&io](boost::system::error_code) { io.stop(); });
  });
  try {
    io.run();
  } catch (...) {
    pump.stop();
    publisher.stop();
    pump_thread.join();
    poll_thread.join();
    publish_thread.join();
    throw;
  }
  pump.stop();
  publisher.stop();
  pump_thread.join();
  poll_thread.join();
  publish_thread.join();
}

}  // namespace ferry::foxglove
