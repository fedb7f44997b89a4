#include "transports/fd/fd_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ferry::bench {

bool write_full(int fd, const std::byte* p, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

int read_full(int fd, std::byte* p, std::size_t n) noexcept {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (r == 0) return got == 0 ? 0 : -1;
    got += static_cast<std::size_t>(r);
  }
  return 1;
}

FdPair make_socket_pair(std::uint64_t size) {
  int sv[2] = {-1, -1};
  const int type = size <= kSeqpacketMax ? SOCK_SEQPACKET : SOCK_STREAM;
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) != 0) {
    throw std::runtime_error(
        fmt::format("unix-socket: socketpair failed: {}", std::strerror(errno)));
  }
  return FdPair{sv[0], sv[1]};
}

FdPair make_pipe() {
  int p[2] = {-1, -1};
  if (::pipe2(p, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("pipe failed: {}", std::strerror(errno)));
  return FdPair{p[1], p[0]};
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string socket_kind(std::uint64_t size) {
  return size <= kSeqpacketMax ? "SOCK_SEQPACKET" : "SOCK_STREAM";
}

}  // namespace ferry::bench
