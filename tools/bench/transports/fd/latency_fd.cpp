// The copying baselines: a Unix socket pair and a pair of pipes. Every byte
// of every message is copied by the kernel twice (in and out), as an
// application that sends its samples over a socket would. Both sides block
// in read() whatever --wait says: there is no spinning API to compare.
#include <fmt/format.h>
#include <unistd.h>

#include <vector>

#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"
#include "latency/ping_loop.hpp"
#include "transports/fd/fd_io.hpp"

namespace ferry::bench {

namespace {

class FdLatency final : public LatencyTransport {
 public:
  explicit FdLatency(FdKind kind) : kind_(kind) {}

  [[nodiscard]] std::string_view name() const noexcept override {
    return kind_ == FdKind::Socket ? kUnixSocket : kPipe;
  }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    if (kind_ == FdKind::Socket) {
      return fmt::format(
          "socketpair(AF_UNIX), SOCK_SEQPACKET up to {} KiB and SOCK_STREAM above, blocking "
          "read/write: every byte copied in and out",
          kSeqpacketMax / 1024);
    }
    return "two pipes, blocking read/write: every byte copied in and out";
  }

  void prepare(const LatencyPlan& plan) override {
    if (kind_ == FdKind::Socket) {
      const FdPair s = make_socket_pair(plan.size);
      ping_write_ = ping_read_ = s.a;
      echo_read_ = echo_write_ = s.b;
    } else {
      const FdPair there = make_pipe();
      const FdPair back = make_pipe();
      ping_write_ = there.a;
      echo_read_ = there.b;
      echo_write_ = back.a;
      ping_read_ = back.b;
    }
  }
  void after_spawn() override { close_all(); }
  void finish() override { close_all(); }

  int ping(const LatencyPlan& plan, RunControl& control) override {
    keep_only(ping_write_, ping_read_);
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, fmt::format("{} ping: the echo side did not start", name()));
      return 2;
    }
    const std::size_t size = plan.size;
    std::vector<std::byte> msg(size, std::byte{0x5a});
    std::vector<std::byte> reply(size);
    const bool ok = ping_loop(plan, control, [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      if (!write_full(ping_write_, msg.data(), size) ||
          read_full(ping_read_, reply.data(), size) != 1) {
        report_error(control, fmt::format("{} ping: the echo side went away", name()));
        return false;
      }
      if (read_seq(reply.data()) != seq) {
        report_error(control, fmt::format("{} ping: expected {}, got {}", name(), seq,
                                          read_seq(reply.data())));
        return false;
      }
      return true;
    });
    return ok ? 0 : 3;  // exiting closes our ends: the echo side reads the end
  }

  int echo(const LatencyPlan& plan, RunControl& control) override {
    keep_only(echo_read_, echo_write_);
    if (!start_barrier(control, 2, 10'000'000'000)) {
      report_error(control, fmt::format("{} echo: the ping side did not start", name()));
      return 2;
    }
    std::vector<std::byte> buf(plan.size);
    for (;;) {
      const int r = read_full(echo_read_, buf.data(), buf.size());
      if (r == 0) break;
      if (r < 0 || !write_full(echo_write_, buf.data(), buf.size())) {
        report_error(control, fmt::format("{} echo: the ping side went away", name()));
        return 3;
      }
    }
    mark_finished(control);
    return 0;
  }

 private:
  // In a side: close every descriptor of the run except its own two.
  void keep_only(int x, int y) noexcept {
    for (int* fd : {&ping_write_, &ping_read_, &echo_read_, &echo_write_}) {
      if (*fd != x && *fd != y && *fd >= 0) ::close(*fd);
    }
  }
  void close_all() noexcept {
    // A socket's two ends appear twice (ping_write_ == ping_read_).
    if (ping_read_ == ping_write_) ping_read_ = -1;
    if (echo_write_ == echo_read_) echo_write_ = -1;
    close_fd(ping_write_);
    close_fd(ping_read_);
    close_fd(echo_read_);
    close_fd(echo_write_);
  }

  FdKind kind_;
  int ping_write_ = -1, ping_read_ = -1, echo_read_ = -1, echo_write_ = -1;
};

}  // namespace

std::unique_ptr<LatencyTransport> make_unix_socket_latency() {
  return std::make_unique<FdLatency>(FdKind::Socket);
}
std::unique_ptr<LatencyTransport> make_pipe_latency() {
  return std::make_unique<FdLatency>(FdKind::Pipe);
}

}  // namespace ferry::bench
