// The copying baselines for throughput: one Unix socket pair or one pipe
// per receiver; the sender writes every message into each (every byte
// copied in and out by the kernel). Blocking reads and writes.
#include <fmt/format.h>
#include <unistd.h>

#include <vector>

#include "harness/seq.hpp"
#include "throughput/stream_loops.hpp"
#include "throughput/throughput_transport.hpp"
#include "transports/fd/fd_io.hpp"

namespace ferry::bench {

namespace {

class FdThroughput final : public ThroughputTransport {
 public:
  explicit FdThroughput(FdKind kind) : kind_(kind) {}

  [[nodiscard]] std::string_view name() const noexcept override {
    return kind_ == FdKind::Socket ? kUnixSocket : kPipe;
  }
  [[nodiscard]] std::string describe(Wait /*wait*/) const override {
    if (kind_ == FdKind::Socket) {
      return fmt::format(
          "one socketpair(AF_UNIX) per receiver, SOCK_SEQPACKET up to {} KiB and SOCK_STREAM "
          "above, blocking: every byte copied in and out",
          kSeqpacketMax / 1024);
    }
    return "one pipe per receiver, blocking: every byte copied in and out";
  }

  void prepare(const ThroughputPlan& plan) override {
    for (std::uint32_t k = 0; k < plan.receivers; ++k) {
      pairs_.push_back(kind_ == FdKind::Socket ? make_socket_pair(plan.size) : make_pipe());
    }
  }
  void after_spawn() override { close_all(); }
  void finish() override { close_all(); }

  int send(const ThroughputPlan& plan, RunControl& control) override {
    for (auto& p : pairs_) close_fd(p.b);
    std::vector<std::byte> msg(plan.size, std::byte{0x5a});
    const bool ok = send_loop(plan, control, [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      for (const auto& p : pairs_) {
        if (!write_full(p.a, msg.data(), msg.size())) {
          report_error(control, fmt::format("{} sender: a receiver went away", name()));
          return false;
        }
      }
      return true;
    });
    return ok ? 0 : 3;
  }

  int receive(const ThroughputPlan& plan, RunControl& control, std::uint32_t index) override {
    for (std::uint32_t k = 0; k < pairs_.size(); ++k) {
      close_fd(pairs_[k].a);
      if (k != index) close_fd(pairs_[k].b);
    }
    const int fd = pairs_[index].b;
    std::vector<std::byte> buf(plan.size);
    const bool ok = receive_loop(plan, control, index, [&](std::uint64_t& seq) {
      if (read_full(fd, buf.data(), buf.size()) != 1) {
        report_error(control, fmt::format("{} receiver: the sender went away", name()));
        return false;
      }
      seq = read_seq(buf.data());
      return true;
    });
    return ok ? 0 : 3;
  }

 private:
  void close_all() noexcept {
    for (auto& p : pairs_) {
      close_fd(p.a);
      close_fd(p.b);
    }
    pairs_.clear();
  }
  FdKind kind_;
  std::vector<FdPair> pairs_;
};

}  // namespace

std::unique_ptr<ThroughputTransport> make_unix_socket_throughput() {
  return std::make_unique<FdThroughput>(FdKind::Socket);
}
std::unique_ptr<ThroughputTransport> make_pipe_throughput() {
  return std::make_unique<FdThroughput>(FdKind::Pipe);
}

}  // namespace ferry::bench
