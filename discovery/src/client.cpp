#include "ferry/discovery/client.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>

#include "ferry/discovery/paths.hpp"
#include "ferry/discovery/protocol.hpp"

namespace ferry::discovery {

std::string unreachable_message(std::string_view domain, std::string_view path,
                                std::string_view why) {
  return fmt::format(
      "cannot reach ferryd for domain '{}' at {} ({}); start it with: ferryd --config FILE "
      "--domain {}",
      domain, path, why, domain);
}

std::expected<Client, std::string> Client::connect(std::string_view domain,
                                                   std::string_view node_name, Millis timeout,
                                                   std::uint32_t resume_slot) {
  auto path = discovery::socket_path(domain);
  if (!path) return std::unexpected(path.error().message);
  Client client;
  client.socket_path_ = path->string();
  auto socket = UnixSeqpacketSocket::connect(*path, timeout);
  if (!socket) {
    return std::unexpected(
        unreachable_message(domain, client.socket_path_, socket.error().message));
  }
  client.socket_ = std::move(*socket);

  Hello hello;
  hello.protocol_version = kProtocolVersion;
  hello.node_name = std::string(node_name);
  hello.pid = static_cast<std::int32_t>(::getpid());
  hello.resume_slot = resume_slot;
  int lock_fd = -1;
  auto reply = client.exchange(hello, timeout, &lock_fd);
  if (!reply) return std::unexpected(reply.error());
  if (const auto* error = std::get_if<Error>(&*reply)) {
    return std::unexpected(fmt::format("ferryd refused node '{}': {}", node_name, error->message));
  }
  const auto* welcome = std::get_if<Welcome>(&*reply);
  if (welcome == nullptr) {
    if (lock_fd >= 0) ::close(lock_fd);
    return std::unexpected(
        fmt::format("ferryd answered hello with {}, expected welcome", to_string(type_of(*reply))));
  }
  client.welcome_ = *welcome;
  if (lock_fd >= 0) {
    const auto lock_path = node_lock_path(domain, welcome->node_slot, path->parent_path());
    if (auto lock = NodeLock::adopt(lock_fd, lock_path)) {
      client.welcome_lock_ = std::move(*lock);
    } else {
      client.welcome_lock_error_ = lock.error();
    }
  }
  return client;
}

std::expected<std::uint32_t, std::string> Client::send(const Message& message) {
  std::uint32_t id = 0;  // 0 marks notifications, which get no reply
  if (!is_notification(type_of(message))) {
    id = next_request_id_++;
    if (next_request_id_ == 0) next_request_id_ = 1;
  }
  auto bytes = encode(message, id);
  if (!bytes) return std::unexpected(bytes.error().message);
  if (auto sent = socket_.send(*bytes, Millis{1000}); !sent) {
    return std::unexpected(
        fmt::format("cannot send to ferryd at {}: {}", socket_path_, sent.error().message));
  }
  return id;
}

std::expected<Message, std::string> Client::request(const Message& request, Millis timeout) {
  return exchange(request, timeout, nullptr);
}

std::expected<Message, std::string> Client::exchange(const Message& request, Millis timeout,
                                                     int* attached_fd) {
  std::array<std::byte, kMaxMessageSize> buffer;
  auto id = send(request);
  if (!id) {
    // ferryd refusing a client says why and closes at once, maybe before
    // our request went out: its reason is still queued for us.
    if (auto received = socket_.recv(buffer, Millis{0})) {
      auto envelope = decode(std::span<const std::byte>(buffer.data(), *received));
      if (envelope && envelope->request_id == 0 &&
          std::holds_alternative<Error>(envelope->message)) {
        return envelope->message;
      }
    }
    return std::unexpected(id.error());
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left =
        std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return std::unexpected(fmt::format("ferryd at {} did not answer {} within {} ms",
                                         socket_path_, to_string(type_of(request)),
                                         timeout.count()));
    }
    auto received = socket_.recv(buffer, left, attached_fd);
    // A descriptor counts only with the reply; any other message's is closed.
    const auto drop_attached = [attached_fd] {
      if (attached_fd != nullptr && *attached_fd >= 0) {
        ::close(*attached_fd);
        *attached_fd = -1;
      }
    };
    if (!received) {
      if (received.error().code == SocketErrorCode::Timeout) continue;
      return std::unexpected(fmt::format("lost the connection to ferryd at {}: {}", socket_path_,
                                         received.error().message));
    }
    auto envelope = decode(std::span<const std::byte>(buffer.data(), *received));
    if (!envelope) {
      drop_attached();
      return std::unexpected(
          fmt::format("ferryd sent a malformed message: {}", envelope.error().message));
    }
    // An unsolicited Error (request id 0) ends the session, e.g. a refused uid.
    if (envelope->request_id == 0 && std::holds_alternative<Error>(envelope->message)) {
      drop_attached();
      return envelope->message;
    }
    if (envelope->request_id == *id) return envelope->message;
    drop_attached();
  }
}

}  // namespace ferry::discovery
