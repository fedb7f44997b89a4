#pragma once
// One WebSocket client: the HTTP upgrade (refused with a reason when the
// server is full or the subprotocol is not foxglove.websocket.v1), then its
// subscriptions, its client channels and its send queue. Everything runs on
// the I/O thread; at most one read and one write are outstanding, and each
// holds the session alive.

#include <array>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "payload.hpp"
#include "protocol.hpp"
#include "send_queue.hpp"

namespace ferry::foxglove {

class Server;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Server& server, boost::asio::ip::tcp::socket socket, std::uint64_t number);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Reads the HTTP request that should upgrade the connection.
  void start();

  // Control messages (JSON): never dropped, sent before any sample.
  void send_text(std::string text);
  void send_status(StatusLevel level, const std::string& message, std::string_view id = {});
  // A sample of `m.channel`, if this client subscribes to it.
  void deliver(const OutMessage& m);
  // The channel went away: its subscription and queued samples go too.
  void channel_removed(ChannelId channel);
  void subscribe_failed(ChannelId channel, const std::string& why);
  // Closes with `reason` (after the write in progress).
  void close(boost::beast::websocket::close_code code, std::string reason);

  [[nodiscard]] bool joined() const noexcept { return joined_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  using Ws = boost::beast::websocket::stream<boost::beast::tcp_stream>;
  struct Text {
    std::string text;
    bool status = false;  // counted in statuses_queued_
  };
  struct ClientChannel {
    std::string topic;
    ChannelId ferry_channel = 0;
  };

  void queue_text(std::string text, bool status);
  void on_request(boost::beast::error_code ec);
  void refuse(boost::beast::http::status status, std::string body);
  void on_accept(boost::beast::error_code ec);
  void read_next();
  void on_read(boost::beast::error_code ec);
  void handle_text(std::string_view text);
  void handle_binary(std::span<const std::byte> frame);
  void subscribe(const Subscribe& s);
  void unsubscribe(const Unsubscribe& u);
  void advertise(const ClientAdvertise& a);
  void unadvertise(const ClientUnadvertise& u);
  void client_message(const ClientMessageData& m);
  void write_next();
  void on_write(boost::beast::error_code ec);
  void note_drops();
  void report_drops();
  // Unregisters from the server (once), logs what the client got and
  // closes the socket.
  void finish(std::string_view why);

  Server& server_;
  Ws ws_;
  std::string name_;  // "client 3 (127.0.0.1:51234)"
  boost::beast::flat_buffer buffer_;
  boost::beast::http::request<boost::beast::http::string_body> request_;
  std::optional<boost::beast::http::response<boost::beast::http::string_body>> refusal_;
  bool joined_ = false;    // counted in max_clients
  bool accepted_ = false;  // the WebSocket handshake is done: frames may be written
  bool finished_ = false;
  bool writing_ = false;
  bool closing_ = false;  // close() asked: no more writes after the current one
  boost::beast::websocket::close_reason close_reason_;

  std::map<SubscriptionId, ChannelId> subscriptions_;
  std::map<ChannelId, SubscriptionId> subscribed_channels_;
  std::map<ClientChannelId, ClientChannel> client_channels_;

  std::deque<Text> control_;
  std::size_t control_bytes_ = 0;
  std::size_t statuses_queued_ = 0;
  std::uint64_t statuses_dropped_ = 0;
  std::uint64_t errors_logged_ = 0;
  SendQueue queue_;
  // The write in progress: its text, or its header and payload.
  Text text_in_flight_;
  std::array<std::byte, kMessageDataHeaderSize> header_in_flight_{};
  std::shared_ptr<const Payload> payload_in_flight_;
  std::uint64_t sent_ = 0;

  boost::asio::steady_timer drop_timer_;
  bool drop_report_armed_ = false;
  std::chrono::steady_clock::time_point last_drop_report_{};
};

}  // namespace ferry::foxglove
