#pragma once
// What ferryd has still to send one client: control messages (Matched,
// Unmatched, replies) that did not fit its socket because the node is not
// reading just now (stopped, swapped out, busy). They wait here, in order,
// and go when the socket is writable again (the daemon polls it for
// EPOLLOUT while this is not empty); the serving loop never waits for a
// client. A node that stays silent is judged by its heartbeats
// (timeout_ms), not by the size of a burst of messages to it; only an
// outbox past kMaxOutboxBytes, which no burst of a live node reaches,
// drops the node.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <span>
#include <vector>

#include "ferry/discovery/socket.hpp"

namespace ferry::discovery {

// 65536 ports' worth of Matched messages; a node that does not read that
// many is not keeping up with the domain at all.
inline constexpr std::size_t kMaxOutboxBytes = 64u << 20;

class ClientOutbox {
 public:
  ClientOutbox() = default;
  ~ClientOutbox();
  ClientOutbox(ClientOutbox&& other) noexcept;
  ClientOutbox& operator=(ClientOutbox&&) = delete;
  ClientOutbox(const ClientOutbox&) = delete;
  ClientOutbox& operator=(const ClientOutbox&) = delete;

  enum class Sent : std::uint8_t {
    Now,     // the socket took it (and everything queued before it)
    Queued,  // waiting here: the caller polls the socket for EPOLLOUT
  };
  // Sends `datagram` (with `attached_fd`, which the outbox duplicates when it
  // must keep it) after what is already queued. An error: the peer closed,
  // the socket failed, or kMaxOutboxBytes would be passed.
  [[nodiscard]] std::expected<Sent, SocketError> send(UnixSeqpacketSocket& socket,
                                                      std::span<const std::byte> datagram,
                                                      int attached_fd = -1);
  // Sends what is queued, as far as the socket takes it. True when nothing
  // is left; an error as for send().
  [[nodiscard]] std::expected<bool, SocketError> flush(UnixSeqpacketSocket& socket);

  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Datagram {
    std::vector<std::byte> bytes;
    int fd = -1;  // owned (a duplicate), closed once sent
  };
  std::deque<Datagram> queue_;
  std::size_t bytes_ = 0;
};

}  // namespace ferry::discovery
