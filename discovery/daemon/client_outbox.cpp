#include "client_outbox.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace ferry::discovery {

ClientOutbox::ClientOutbox(ClientOutbox&& other) noexcept
    : queue_(std::move(other.queue_)), bytes_(std::exchange(other.bytes_, 0)) {
  other.queue_.clear();
}

ClientOutbox::~ClientOutbox() {
  for (const Datagram& d : queue_) {
    if (d.fd >= 0) ::close(d.fd);
  }
}

std::expected<ClientOutbox::Sent, SocketError> ClientOutbox::send(
    UnixSeqpacketSocket& socket, std::span<const std::byte> datagram, int attached_fd) {
  if (queue_.empty()) {
    auto sent = socket.send(datagram, UnixSeqpacketSocket::Millis{0}, attached_fd);
    if (sent) return Sent::Now;
    if (sent.error().code != SocketErrorCode::Timeout) return std::unexpected(sent.error());
  }
  if (bytes_ + datagram.size() > kMaxOutboxBytes) {
    return std::unexpected(
        SocketError{SocketErrorCode::Timeout, EAGAIN,
                    "it left " + std::to_string(queue_.size()) + " control messages (" +
                        std::to_string(bytes_) +
                        " bytes) from ferryd unread, the most ferryd keeps for a node"});
  }
  Datagram kept{{datagram.begin(), datagram.end()}, -1};
  if (attached_fd >= 0) {
    kept.fd = ::fcntl(attached_fd, F_DUPFD_CLOEXEC, 0);
    if (kept.fd < 0) {
      const int err = errno;
      return std::unexpected(
          SocketError{SocketErrorCode::System, err,
                      std::string("fcntl(F_DUPFD_CLOEXEC): ") + std::strerror(err)});
    }
  }
  bytes_ += kept.bytes.size();
  queue_.push_back(std::move(kept));
  return Sent::Queued;
}

std::expected<bool, SocketError> ClientOutbox::flush(UnixSeqpacketSocket& socket) {
  while (!queue_.empty()) {
    Datagram& front = queue_.front();
    auto sent = socket.send(front.bytes, UnixSeqpacketSocket::Millis{0}, front.fd);
    if (!sent) {
      if (sent.error().code == SocketErrorCode::Timeout) return false;
      return std::unexpected(sent.error());
    }
    if (front.fd >= 0) ::close(front.fd);
    bytes_ -= front.bytes.size();
    queue_.pop_front();
  }
  return true;
}

}  // namespace ferry::discovery
