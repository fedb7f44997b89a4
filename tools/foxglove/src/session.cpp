#include "session.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/buffer.hpp>
#include <vector>

#include "server_core.hpp"

namespace ferry::foxglove {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

namespace {

// Whether the comma-separated Sec-WebSocket-Protocol list names ours.
bool offers_subprotocol(std::string_view list) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item == kSubprotocol) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::string mib(std::size_t bytes) {
  return fmt::format("{:.4g} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

Session::Session(Server& server, asio::ip::tcp::socket socket, std::uint64_t number)
    : server_(server),
      ws_(std::move(socket)),
      queue_(server.options().send_buffer),
      drop_timer_(server.io()) {
  beast::error_code ec;
  const auto peer = beast::get_lowest_layer(ws_).socket().remote_endpoint(ec);
  name_ = ec ? fmt::format("client {}", number)
             : fmt::format("client {} ({}:{})", number, peer.address().to_string(), peer.port());
}

void Session::start() {
  beast::get_lowest_layer(ws_).expires_after(kHandshakeTimeout);
  http::async_read(
      ws_.next_layer(), buffer_, request_,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void Session::on_request(beast::error_code ec) {
  if (ec) return finish(fmt::format("no HTTP request ({})", ec.message()));
  if (!websocket::is_upgrade(request_))
    return refuse(http::status::upgrade_required,
                  "ferry foxglove speaks the Foxglove WebSocket protocol: open this address "
                  "in Foxglove or Lichtblick (Open connection > Foxglove WebSocket)\n");
  if (server_.stopping())
    return refuse(http::status::service_unavailable, "ferry foxglove is stopping\n");
  const auto offered = request_[http::field::sec_websocket_protocol];
  if (!offers_subprotocol(std::string_view(offered.data(), offered.size())))
    return refuse(http::status::bad_request,
                  fmt::format("ferry foxglove needs the WebSocket subprotocol {}\n", kSubprotocol));
  if (!server_.has_room())
    return refuse(http::status::service_unavailable,
                  fmt::format("ferry foxglove serves at most {} clients at once (--max-clients); "
                              "one must leave first\n",
                              server_.options().max_clients));
  // The WebSocket stream has its own timeouts from here on.
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout timeout{};
  timeout.handshake_timeout = kHandshakeTimeout;
  // A client that answers no ping for a minute (its host gone) is closed;
  // one that only reads slowly still answers at the TCP level and stays.
  timeout.idle_timeout = std::chrono::seconds(60);
  timeout.keep_alive_pings = true;
  ws_.set_option(timeout);
  ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
    res.set(http::field::sec_websocket_protocol,
            boost::beast::string_view(kSubprotocol.data(), kSubprotocol.size()));
    res.set(http::field::server, "ferry-foxglove");
  }));
  ws_.read_message_max(0);  // on_read applies kMaxClientMessage
  // A message is one frame, written by one gathering write: with Beast's
  // default (fragments of its 4 KiB write buffer) a 1080p frame took 760
  // writes and as many frames for the client to put together.
  ws_.auto_fragment(false);
  server_.join(shared_from_this());  // takes its slot now: the check above stays true
  joined_ = true;
  ws_.async_accept(request_,
                   [self = shared_from_this()](beast::error_code e) { self->on_accept(e); });
}

void Session::refuse(http::status status, std::string body) {
  spdlog::info("foxglove: {} refused: {}", name_, body.substr(0, body.find('\n')));
  refusal_.emplace(status, request_.version());
  refusal_->set(http::field::server, "ferry-foxglove");
  refusal_->set(http::field::content_type, "text/plain; charset=utf-8");
  refusal_->keep_alive(false);
  refusal_->body() = std::move(body);
  refusal_->prepare_payload();
  http::async_write(ws_.next_layer(), *refusal_,
                    [self = shared_from_this()](beast::error_code, std::size_t) {
                      beast::error_code ignored;
                      beast::get_lowest_layer(self->ws_).socket().shutdown(
                          asio::ip::tcp::socket::shutdown_both, ignored);
                      self->finish("refused");
                    });
}

void Session::on_accept(beast::error_code ec) {
  if (ec) return finish(fmt::format("WebSocket handshake failed ({})", ec.message()));
  spdlog::info("foxglove: {} connected", name_);
  accepted_ = true;
  buffer_.clear();
  read_next();
  write_next();  // serverInfo and advertise, queued by join()
}

void Session::read_next() {
  // In parts, so that the size limit is ours to apply (see on_read).
  constexpr std::size_t kReadPart = 64 * 1024;
  ws_.async_read_some(
      buffer_, kReadPart,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void Session::on_read(beast::error_code ec) {
  if (ec) {
    if (ec == websocket::error::closed) return finish("closed by the client");
    return finish(ec.message());
  }
  if (closing_) return;  // the close handshake reads what is left
  if (buffer_.size() > kMaxClientMessage) {
    // Refused with the close handshake, which reads and discards the rest
    // (Beast's own read_message_max resets the connection instead, and the
    // client never learns why).
    buffer_.clear();
    close(websocket::close_code::too_big,
          fmt::format("a message over {} (the server's limit)", mib(kMaxClientMessage)));
    return;
  }
  if (!ws_.is_message_done()) return read_next();
  const auto data = buffer_.cdata();
  if (ws_.got_text()) {
    handle_text(std::string_view(static_cast<const char*>(data.data()), data.size()));
  } else {
    handle_binary(
        std::span<const std::byte>(static_cast<const std::byte*>(data.data()), data.size()));
  }
  buffer_.consume(buffer_.size());
  if (!finished_) read_next();
}

void Session::handle_text(std::string_view text) {
  std::visit(
      [this](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Subscribe>) {
          subscribe(m);
        } else if constexpr (std::is_same_v<T, Unsubscribe>) {
          unsubscribe(m);
        } else if constexpr (std::is_same_v<T, ClientAdvertise>) {
          advertise(m);
        } else if constexpr (std::is_same_v<T, ClientUnadvertise>) {
          unadvertise(m);
        } else if constexpr (std::is_same_v<T, Unsupported>) {
          send_status(StatusLevel::Error,
                      fmt::format("'{}' is not supported: ferry foxglove offers the "
                                  "clientPublish capability only (no parameters, services, "
                                  "connection graph or assets yet)",
                                  m.op));
        } else {
          send_status(StatusLevel::Error, m.why);
        }
      },
      parse_client_text(text));
}

void Session::handle_binary(std::span<const std::byte> frame) {
  std::visit(
      [this](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, ClientMessageData>) {
          client_message(m);
        } else if constexpr (std::is_same_v<T, ServiceCallRequest>) {
          send_status(StatusLevel::Error,
                      "service calls are not supported: ferry foxglove offers no services yet");
        } else {
          send_status(StatusLevel::Error, m.why);
        }
      },
      parse_client_binary(frame));
}

void Session::subscribe(const Subscribe& s) {
  for (const auto& one : s.subscriptions) {
    if (subscriptions_.contains(one.id)) {
      send_status(StatusLevel::Error,
                  fmt::format("subscribe: subscription id {} is in use", one.id));
      continue;
    }
    const Channel* channel = server_.channel(one.channel);
    if (channel == nullptr) {
      send_status(StatusLevel::Error,
                  fmt::format("subscribe: no channel {} (not advertised, or gone)", one.channel));
      continue;
    }
    if (const auto it = subscribed_channels_.find(one.channel); it != subscribed_channels_.end()) {
      send_status(StatusLevel::Error,
                  fmt::format("subscribe: channel {} ('{}') is subscribed already (subscription "
                              "{})",
                              one.channel, channel->description.topic, it->second));
      continue;
    }
    subscriptions_.emplace(one.id, one.channel);
    subscribed_channels_.emplace(one.channel, one.id);
    server_.add_interest(one.channel);
  }
}

void Session::unsubscribe(const Unsubscribe& u) {
  for (const SubscriptionId id : u.ids) {
    const auto it = subscriptions_.find(id);
    if (it == subscriptions_.end()) {
      send_status(StatusLevel::Error, fmt::format("unsubscribe: no subscription {}", id));
      continue;
    }
    const ChannelId channel = it->second;
    subscriptions_.erase(it);
    subscribed_channels_.erase(channel);
    queue_.remove_channel(channel);
    server_.drop_interest(channel);
  }
}

void Session::advertise(const ClientAdvertise& a) {
  for (const auto& c : a.channels) {
    std::string refused;
    const Channel* target = server_.channel_of_topic(c.topic);
    if (client_channels_.contains(c.id)) {
      refused = fmt::format("client channel id {} is in use", c.id);
    } else if (c.encoding != "cdr") {
      refused = fmt::format("encoding '{}' is not supported; ferry foxglove takes cdr", c.encoding);
    } else if (target == nullptr) {
      refused = fmt::format(
          "there is no ferry topic '{}' (clientPublish publishes into the "
          "advertised topics only)",
          c.topic);
    } else if (target->description.schema_name != c.schema_name) {
      refused = fmt::format("topic '{}' has schema '{}', not '{}'", c.topic,
                            target->description.schema_name, c.schema_name);
    }
    if (!refused.empty()) {
      send_status(StatusLevel::Error,
                  fmt::format("advertise: channel {} on '{}' refused: {}", c.id, c.topic, refused));
      continue;
    }
    client_channels_.emplace(c.id, ClientChannel{c.topic, target->description.id});
    std::weak_ptr<Session> weak = weak_from_this();
    server_.publisher().open(c.topic, target->coding, [weak, &io = server_.io()](std::string why) {
      asio::post(io, [weak, why = std::move(why)] {
        if (auto self = weak.lock()) self->send_status(StatusLevel::Error, why);
      });
    });
  }
}

void Session::unadvertise(const ClientUnadvertise& u) {
  for (const ClientChannelId id : u.ids) {
    const auto it = client_channels_.find(id);
    if (it == client_channels_.end()) {
      send_status(StatusLevel::Error, fmt::format("unadvertise: no client channel {}", id));
      continue;
    }
    server_.publisher().close(it->second.topic);
    client_channels_.erase(it);
  }
}

void Session::client_message(const ClientMessageData& m) {
  const auto it = client_channels_.find(m.channel);
  if (it == client_channels_.end()) {
    send_status(StatusLevel::Error,
                fmt::format("client message data: client channel {} is not advertised (or was "
                            "refused)",
                            m.channel));
    return;
  }
  std::weak_ptr<Session> weak = weak_from_this();
  const bool queued = server_.publisher().publish(
      it->second.topic, std::vector<std::byte>(m.payload.begin(), m.payload.end()),
      [weak, &io = server_.io()](std::string why) {
        asio::post(io, [weak, why = std::move(why)] {
          if (auto self = weak.lock()) self->send_status(StatusLevel::Error, why);
        });
      });
  if (!queued)
    send_status(StatusLevel::Warning,
                fmt::format("clientPublish on '{}': a message was dropped: {} wait to be "
                            "published already",
                            it->second.topic, mib(ClientPublisher::kQueueBytes)));
}

void Session::send_text(std::string text) { queue_text(std::move(text), false); }

void Session::queue_text(std::string text, bool status) {
  if (finished_ || closing_) return;
  control_bytes_ += text.size();
  control_.push_back(Text{std::move(text), status});
  if (control_bytes_ > kMaxControlBytes) {
    close(websocket::close_code::policy_error,
          "the client does not read: its control messages exceed the limit");
    return;
  }
  write_next();
}

void Session::send_status(StatusLevel level, const std::string& message, std::string_view id) {
  // A client's mistake, not the server's: logged at info, and only the
  // first few (a client sending garbage in a loop must not flood the log).
  constexpr std::uint64_t kErrorsLogged = 20;
  if (level == StatusLevel::Error && errors_logged_ < kErrorsLogged) {
    spdlog::info("foxglove: {}: {}{}", name_, message,
                 ++errors_logged_ == kErrorsLogged ? " (its further errors are not logged)" : "");
  }
  if (statuses_queued_ >= kMaxQueuedStatuses) {
    ++statuses_dropped_;
    return;
  }
  ++statuses_queued_;
  queue_text(status_json(level, message, id), true);
}

void Session::deliver(const OutMessage& m) {
  if (!joined_ || closing_ || !subscribed_channels_.contains(m.channel)) return;
  if (queue_.push(m) != 0) note_drops();
  write_next();
}

void Session::channel_removed(ChannelId channel) {
  const auto it = subscribed_channels_.find(channel);
  if (it != subscribed_channels_.end()) {
    subscriptions_.erase(it->second);
    subscribed_channels_.erase(it);
    queue_.remove_channel(channel);
    server_.drop_interest(channel);
  }
}

void Session::subscribe_failed(ChannelId channel, const std::string& why) {
  if (subscribed_channels_.contains(channel)) send_status(StatusLevel::Error, why);
}

void Session::close(websocket::close_code code, std::string reason) {
  if (closing_ || finished_) return;
  closing_ = true;
  close_reason_ = websocket::close_reason(code, reason);
  spdlog::info("foxglove: closing {}: {}", name_, reason);
  write_next();
}

void Session::write_next() {
  if (writing_ || finished_ || !accepted_ || !ws_.is_open()) return;
  auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->on_write(ec);
  };
  if (closing_) {
    writing_ = true;
    ws_.async_close(close_reason_, [self = shared_from_this()](beast::error_code ec) {
      self->writing_ = false;
      self->finish(ec ? ec.message() : "closed");
    });
    return;
  }
  if (!control_.empty()) {
    text_in_flight_ = std::move(control_.front());
    control_.pop_front();
    control_bytes_ -= text_in_flight_.text.size();
    writing_ = true;
    ws_.text(true);
    ws_.async_write(asio::buffer(text_in_flight_.text), std::move(done));
    return;
  }
  auto next = queue_.pop();
  if (!next) return;
  const auto sub = subscribed_channels_.find(next->channel);
  if (sub == subscribed_channels_.end()) return write_next();  // cannot happen: removed with it
  header_in_flight_ = message_data_header(sub->second, next->timestamp_ns);
  payload_in_flight_ = std::move(next->payload);
  const std::array<asio::const_buffer, 2> buffers{
      asio::buffer(header_in_flight_),
      asio::buffer(payload_in_flight_->bytes().data(), payload_in_flight_->size())};
  writing_ = true;
  ws_.binary(true);
  ws_.async_write(buffers, std::move(done));
}

void Session::on_write(beast::error_code ec) {
  writing_ = false;
  if (!text_in_flight_.text.empty()) {
    // A status is counted until it is sent (kMaxQueuedStatuses).
    if (text_in_flight_.status) --statuses_queued_;
    text_in_flight_ = Text{};
  } else if (payload_in_flight_) {
    payload_in_flight_.reset();
    ++sent_;
  }
  if (ec) return finish(fmt::format("write failed ({})", ec.message()));
  write_next();
}

void Session::note_drops() {
  if (drop_report_armed_) return;
  drop_report_armed_ = true;
  const auto due = last_drop_report_ + server_.options().drop_report_every;
  drop_timer_.expires_at(std::max(due, std::chrono::steady_clock::now()));
  drop_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    self->drop_report_armed_ = false;
    if (!ec) self->report_drops();
  });
}

void Session::report_drops() {
  const auto recent = queue_.take_recent_drops();
  if (recent.empty() || finished_) return;
  last_drop_report_ = std::chrono::steady_clock::now();
  std::string per_channel;
  std::uint64_t total = 0;
  for (const auto& [channel, n] : recent) {
    const Channel* c = server_.channel(channel);
    per_channel += fmt::format("{}{} of '{}'", per_channel.empty() ? "" : ", ", n,
                               c != nullptr ? c->description.topic : fmt::format("{}", channel));
    total += n;
  }
  std::uint64_t since_start = 0;
  for (const auto& [channel, n] : queue_.total_drops()) since_start += n;
  const std::string message = fmt::format(
      "ferry foxglove: this client reads too slowly, so the oldest messages waiting for it were "
      "dropped: {} ({} in all since it connected; its send buffer is {})",
      per_channel, since_start, mib(queue_.budget()));
  spdlog::warn("foxglove: {}: dropped {} message(s) it read too slowly: {}", name_, total,
               per_channel);
  send_status(StatusLevel::Warning, message, "ferry.dropped");
}

void Session::finish(std::string_view why) {
  if (finished_) return;
  finished_ = true;
  drop_timer_.cancel();
  if (joined_) {
    std::string drops;
    for (const auto& [channel, n] : queue_.total_drops()) {
      const Channel* c = server_.channel(channel);
      drops += fmt::format(", {} dropped on '{}'", n,
                           c != nullptr ? c->description.topic : fmt::format("{}", channel));
    }
    spdlog::info("foxglove: {} left ({}): {} message(s) sent{}", name_, why, sent_, drops);
    for (const auto& [id, channel] : subscriptions_) server_.drop_interest(channel);
    for (const auto& [id, c] : client_channels_) server_.publisher().close(c.topic);
    subscriptions_.clear();
    subscribed_channels_.clear();
    client_channels_.clear();
  }
  // Ends the read in progress (and a write, if one failed).
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  server_.leave(*this);
}

}  // namespace ferry::foxglove
