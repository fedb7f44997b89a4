// The Unix-socket baseline of `ferry bench fanout`: one SOCK_SEQPACKET
// socketpair per subscriber; the publisher writes the 64 B message K times
// (one copy and one write(2) each), every subscriber sleeps in a blocking read.
#include <unistd.h>

#include <array>
#include <vector>

#include "fanout/fanout_transport.hpp"
#include "harness/seq.hpp"
#include "transports/fd/fd_io.hpp"

namespace ferry::bench {

namespace {

class UnixSocketFanout final : public FanoutTransport {
 public:
  ~UnixSocketFanout() override { finish(); }
  [[nodiscard]] std::string_view name() const noexcept override { return kUnixSocket; }
  [[nodiscard]] std::string describe() const override {
    return "one socketpair(AF_UNIX, SOCK_SEQPACKET) per subscriber: K write(2)s of the message, "
           "each subscriber in a blocking read(2)";
  }

  void prepare(const FanoutPlan& plan) override {
    finish();
    for (std::uint32_t k = 0; k < plan.subscribers; ++k) {
      pairs_.push_back(make_socket_pair(kFanoutSize));
    }
  }
  void finish() override {
    for (auto& p : pairs_) {
      close_fd(p.a);
      close_fd(p.b);
    }
    pairs_.clear();
  }

  int publish(const FanoutPlan& plan, FanoutShared& shared) override {
    for (auto& p : pairs_) close_fd(p.b);  // the subscribers' ends
    std::array<std::byte, kFanoutSize> msg{};
    const bool ok = fanout_publish_loop(plan, shared, [&](std::uint64_t seq) {
      write_seq(msg.data(), seq);
      for (const auto& p : pairs_) {
        if (!write_full(p.a, msg.data(), msg.size())) {
          report_error(shared.control(), "unix-socket publisher: write failed");
          return false;
        }
      }
      return true;
    });
    return ok ? 0 : 3;
  }

  int subscribe(const FanoutPlan& plan, FanoutShared& shared, std::uint32_t index) override {
    const int fd = pairs_[index].b;
    std::array<std::byte, kFanoutSize> msg{};
    const bool ok = fanout_subscribe_loop(plan, shared, index, [&](std::uint64_t& seq) {
      if (read_full(fd, msg.data(), msg.size()) != 1) {
        report_error(shared.control(), "unix-socket subscriber: read failed");
        return false;
      }
      seq = read_seq(msg.data());
      return true;
    });
    return ok ? 0 : 3;
  }

 private:
  std::vector<FdPair> pairs_;
};

}  // namespace

std::unique_ptr<FanoutTransport> make_unix_socket_fanout() {
  return std::make_unique<UnixSocketFanout>();
}

}  // namespace ferry::bench
