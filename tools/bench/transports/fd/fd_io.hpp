#pragma once
// Whole-message reads and writes on a socket or a pipe, and the descriptors
// the copying baselines use.

#include <cstddef>
#include <cstdint>
#include <string>

namespace ferry::bench {

// Writes all `n` bytes (retrying short writes and EINTR). False on an error.
bool write_full(int fd, const std::byte* p, std::size_t n) noexcept;
// Reads exactly `n` bytes. 1: done; 0: the peer closed before the first
// byte (a clean end); -1: an error or a close in the middle.
int read_full(int fd, std::byte* p, std::size_t n) noexcept;

// Up to this size the Unix socket is SOCK_SEQPACKET (one message per
// datagram); above, SOCK_STREAM (a datagram must fit the socket buffer).
inline constexpr std::uint64_t kSeqpacketMax = 64 * 1024;

// Which descriptor pair a copying baseline runs over.
enum class FdKind : std::uint8_t { Socket, Pipe };

struct FdPair {
  int a = -1;  // the sender's end (write), or a socket's first end
  int b = -1;  // the receiver's end (read), or a socket's second end
};
// A connected socket pair of the kind above (both ends duplex). Throws std::runtime_error.
[[nodiscard]] FdPair make_socket_pair(std::uint64_t size);
// A pipe: a = write end, b = read end. Throws std::runtime_error.
[[nodiscard]] FdPair make_pipe();
void close_fd(int& fd) noexcept;

[[nodiscard]] std::string socket_kind(std::uint64_t size);

}  // namespace ferry::bench
