#pragma once
// The client side of the control protocol: connect to a domain's ferryd, say
// hello, and exchange request/reply pairs. The CLI uses it as it is; the
// runtime (core) uses connect() and then reads the socket on its own thread.

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "ferry/discovery/messages.hpp"
#include "ferry/discovery/node_lock.hpp"
#include "ferry/discovery/socket.hpp"

namespace ferry::discovery {

class Client {
 public:
  using Millis = std::chrono::milliseconds;

  // Connects to the domain's daemon and registers `node_name`. The error is
  // one sentence for the user: which socket was tried and how to start ferryd.
  [[nodiscard]] static std::expected<Client, std::string> connect(std::string_view domain,
                                                                  std::string_view node_name,
                                                                  Millis timeout,
                                                                  std::uint32_t resume_slot = 0);

  // Sends `request` and waits for its reply (notifications that arrive in
  // between are skipped). An Error reply is returned as a value, not as a
  // failure; failures are transport problems, in one sentence.
  [[nodiscard]] std::expected<Message, std::string> request(const Message& request, Millis timeout);

  // Sends without waiting; returns the request id used (0 for a
  // notification such as QueueReleased).
  [[nodiscard]] std::expected<std::uint32_t, std::string> send(const Message& message);
  // The id the next request sent will get (the caller serializes sends).
  [[nodiscard]] std::uint32_t next_request_id() const noexcept { return next_request_id_; }

  [[nodiscard]] const Welcome& welcome() const noexcept { return welcome_; }
  // The node lock ferryd sent with the Welcome (see NodeLock), once: not
  // held when ferryd sent none (a resumed slot keeps the lock it has) or the
  // one it sent was refused (welcome_lock_error() says why).
  [[nodiscard]] NodeLock take_welcome_lock() noexcept { return std::move(welcome_lock_); }
  [[nodiscard]] const std::string& welcome_lock_error() const noexcept {
    return welcome_lock_error_;
  }
  [[nodiscard]] const std::string& socket_path() const noexcept { return socket_path_; }
  [[nodiscard]] UnixSeqpacketSocket& socket() noexcept { return socket_; }

 private:
  Client() = default;
  // request(), keeping a descriptor the reply brought in `*attached_fd`
  // (-1 when none; descriptors with other messages are closed).
  [[nodiscard]] std::expected<Message, std::string> exchange(const Message& request, Millis timeout,
                                                             int* attached_fd);

  UnixSeqpacketSocket socket_;
  Welcome welcome_;
  NodeLock welcome_lock_;
  std::string welcome_lock_error_;
  std::string socket_path_;
  std::uint32_t next_request_id_ = 1;
};

// "cannot reach ferryd for domain 'X' at PATH (why); start it with: ferryd --config FILE --domain
// X"
[[nodiscard]] std::string unreachable_message(std::string_view domain, std::string_view path,
                                              std::string_view why);

}  // namespace ferry::discovery
