// `ferry bench rpc`: the round trip of a call (request there, response back)
// through a ferry service and through a Unix-socket request/reply, in one
// run. Each repeat forks a server and a client pinned to two CPUs; the
// client times every call; the report gives each transport's percentiles,
// the median of the repeats (docs/services.md).
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ferry/ferry.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ferry/bench/bench.hpp"
#include "ferry/bench/clock.hpp"
#include "ferry/bench/percentiles.hpp"
#include "harness/private_domain.hpp"
#include "harness/processes.hpp"
#include "harness/signals.hpp"
#ifdef FERRY_BENCH_HAVE_ICEORYX
#include "transports/iceoryx/iceoryx_roudi.hpp"
#include "transports/iceoryx/rpc_iceoryx.hpp"
#endif

namespace {

// The 64-byte request and response of every transport.
struct RpcMessage {
  std::uint64_t n;
  std::uint8_t pad[56];
};

}  // namespace

FERRY_TYPE_NAMED(RpcMessage, "RpcMessage");

namespace ferry::bench {

namespace {

constexpr const char* kService = "bench/rpc";
constexpr std::uint64_t kWarmup = 2000;
constexpr std::int64_t kRunBudgetNs = 60'000'000'000;

// Shared by the orchestrator and its two sides (an anonymous shared mapping).
struct Board {
  // SYNC: `stop` is a plain signal (relaxed load by the server, seq_cst
  // store by the client): nothing is published through it. `ok` (seq_cst
  // store by the client after it wrote round_trip_ns and count) pairs with
  // the orchestrator's seq_cst load, which also comes after waitpid().
  std::atomic<bool> stop{false};
  std::atomic<bool> ok{false};
  std::uint64_t count = 0;
  std::int64_t round_trip_ns[1];  // `count` of them (the mapping is sized for them)
};

class Shared {
 public:
  explicit Shared(std::uint64_t rounds) : bytes_(sizeof(Board) + rounds * sizeof(std::int64_t)) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map the benchmark's shared board");
    board_ = new (p) Board{};
  }
  ~Shared() { ::munmap(board_, bytes_); }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  Board& board() { return *board_; }

 private:
  std::size_t bytes_;
  Board* board_;
};

std::string service_yaml() {
  return fmt::format(
      "types:\n"
      "  RpcMessage:\n"
      "    fields:\n"
      "      - {{ name: n, type: u64 }}\n"
      "      - {{ name: pad, type: \"u8[56]\" }}\n"
      "services:\n"
      "  - {{ name: {}, request: RpcMessage, response: RpcMessage, capacity: 8 }}\n",
      kService);
}

// Both ferry sides spin while they wait (as `ferry bench latency` does by
// default): take_spin large enough that a round trip never sleeps.
constexpr std::uint32_t kSpin = 1U << 22;

// Nanoseconds as microseconds, for printing.
double micros(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }

ferry::NodeOptions spinning() {
  ferry::NodeOptions options;
  options.take_spin = kSpin;
  return options;
}

int ferry_server(const PrivateDomain& domain, Board& board) {
  domain.enter();
  ferry::Node node{"rpc-server", spinning()};
  auto server = node.server<RpcMessage, RpcMessage>(kService);
  while (!board.stop.load(std::memory_order_relaxed)) {  // SYNC: relaxed, a signal (Board)
    if (auto request = server.take_request(std::chrono::milliseconds(50))) {
      RpcMessage answer = **request;
      answer.n += 1;
      request->respond(answer);
    }
  }
  return 0;
}

int ferry_client(const PrivateDomain& domain, Board& board, std::uint64_t rounds) {
  domain.enter();
  ferry::Node node{"rpc-client", spinning()};
  auto client = node.client<RpcMessage, RpcMessage>(kService);
  if (!client.wait_for_server(std::chrono::seconds(10))) return 2;
  RpcMessage q{};
  for (std::uint64_t i = 0; i < kWarmup + rounds; ++i) {
    q.n = i;
    const std::int64_t start = now_ns();
    auto r = client.call(q, std::chrono::seconds(5));
    const std::int64_t end = now_ns();
    if (!r || (*r)->n != i + 1) return 3;
    if (i >= kWarmup) board.round_trip_ns[i - kWarmup] = end - start;
  }
  board.count = rounds;
  board.ok.store(true);
  board.stop.store(true);
  return 0;
}

bool full_io(int fd, void* data, std::size_t size, bool write) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = write ? ::write(fd, p, size) : ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int socket_server(int fd) {
  RpcMessage m{};
  while (full_io(fd, &m, sizeof m, false)) {
    m.n += 1;
    if (!full_io(fd, &m, sizeof m, true)) return 2;
  }
  return 0;  // the client closed
}

int socket_client(int fd, Board& board, std::uint64_t rounds) {
  RpcMessage q{};
  for (std::uint64_t i = 0; i < kWarmup + rounds; ++i) {
    q.n = i;
    const std::int64_t start = now_ns();
    if (!full_io(fd, &q, sizeof q, true) || !full_io(fd, &q, sizeof q, false)) return 2;
    const std::int64_t end = now_ns();
    if (q.n != i + 1) return 3;
    if (i >= kWarmup) board.round_trip_ns[i - kWarmup] = end - start;
  }
  board.count = rounds;
  board.ok.store(true);
  ::close(fd);
  return 0;
}

// One run of `transport`; empty when it failed.
std::optional<Percentiles> run_once(const std::string& transport, const RpcOptions& o,
                                    const PrivateDomain& domain, SignalScope& signals,
                                    std::uint64_t run) {
  Shared shared(o.rounds);
  Board& board = shared.board();
  ChildGroup group(signals);
  const int server_cpu = o.cpus.size() >= 2 ? o.cpus[1] : -1;
  const int client_cpu = o.cpus.empty() ? -1 : o.cpus[0];
  std::vector<std::string> iceoryx_names;
  if (transport == "ferry") {
    group.spawn(server_cpu, [&] { return ferry_server(domain, board); });
    group.spawn(client_cpu, [&] { return ferry_client(domain, board, o.rounds); });
  } else if (transport == "iceoryx") {
#ifdef FERRY_BENCH_HAVE_ICEORYX
    iceoryx_names = {fmt::format("ferry-rpc-{}-{}-server", ::getpid(), run),
                     fmt::format("ferry-rpc-{}-{}-client", ::getpid(), run)};
    group.spawn(server_cpu, [&] { return iceoryx_rpc_server(iceoryx_names[0], run, board.stop); });
    group.spawn(client_cpu, [&] {
      const int code =
          iceoryx_rpc_client(iceoryx_names[1], run, kWarmup, o.rounds, board.round_trip_ns);
      if (code == 0) {
        board.count = o.rounds;
        board.ok.store(true);
      }
      board.stop.store(true);
      return code;
    });
#endif
  } else {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
      throw std::runtime_error(fmt::format("socketpair: {}", std::strerror(errno)));
    group.spawn(server_cpu, [&] {
      ::close(fds[0]);
      return socket_server(fds[1]);
    });
    group.spawn(client_cpu, [&] {
      ::close(fds[1]);
      return socket_client(fds[0], board, o.rounds);
    });
    ::close(fds[0]);
    ::close(fds[1]);
  }
  const auto outcome = group.wait_all(now_ns() + kRunBudgetNs);
#ifdef FERRY_BENCH_HAVE_ICEORYX
  for (const auto& name : iceoryx_names) remove_iceoryx_app_files(name);
#endif
  bool ok = outcome == ChildGroup::Outcome::AllExited && board.ok.load();
  for (const auto& c : group.children()) ok = ok && c.code == 0;
  if (!ok) return std::nullopt;
  return percentiles(std::span<std::int64_t>(board.round_trip_ns, board.count));
}

}  // namespace

int run_rpc(const RpcOptions& o, std::FILE* out) {
  SignalScope signals;
  PrivateDomain domain;
  domain.start_daemon(service_yaml());
  std::vector<std::string> transports{"ferry", "unix-socket"};
#ifdef FERRY_BENCH_HAVE_ICEORYX
  // iceoryx 2.0's popo::Client / popo::Server through a RouDi of the run's own.
  std::string roudi_error;
  auto roudi = start_rpc_roudi(domain.runtime_dir(), roudi_error);
  if (roudi) {
    transports.push_back("iceoryx");
  } else {
    std::fprintf(stderr, "ferry bench rpc: no iceoryx comparator: %s\n", roudi_error.c_str());
  }
#endif
  std::vector<std::vector<Percentiles>> runs(transports.size());
  int failures = 0;
  for (std::uint32_t r = 0; r < o.repeat; ++r) {
    for (std::size_t t = 0; t < transports.size(); ++t) {
      if (auto p = run_once(transports[t], o, domain, signals, r * transports.size() + t)) {
        runs[t].push_back(*p);
      } else {
        ++failures;
        std::fprintf(stderr, "ferry bench rpc: a run of %s failed\n", transports[t].c_str());
      }
    }
  }
  std::vector<Percentiles> result;
  for (const auto& r : runs) result.push_back(median_of(r));
  if (o.json) {
    nlohmann::ordered_json j = {{"size", sizeof(RpcMessage)},
                                {"rounds", o.rounds},
                                {"repeat", o.repeat},
                                {"results", nlohmann::ordered_json::array()}};
    for (std::size_t t = 0; t < transports.size(); ++t) {
      const Percentiles& p = result[t];
      j["results"].push_back({{"transport", transports[t]},
                              {"runs", runs[t].size()},
                              {"p50_ns", p.p50},
                              {"p90_ns", p.p90},
                              {"p99_ns", p.p99},
                              {"p999_ns", p.p999},
                              {"max_ns", p.max}});
    }
    if (result[1].p50 > 0)
      j["ferry_vs_unix_socket_p50"] =
          static_cast<double>(result[0].p50) / static_cast<double>(result[1].p50);
    std::fprintf(out, "%s\n", j.dump(2).c_str());
  } else {
    const std::string where =
        o.cpus.size() >= 2 ? fmt::format("client on CPU {}, server on CPU {}", o.cpus[0], o.cpus[1])
                           : std::string("not pinned (--cpus pins them)");
    std::fprintf(out,
                 "ferry bench rpc: round trip of a %zu-byte request and response, %llu calls per "
                 "run, median of %u run(s); %s\n",
                 sizeof(RpcMessage), static_cast<unsigned long long>(o.rounds), o.repeat,
                 where.c_str());
    std::fprintf(out, "%-12s %10s %10s %10s %10s %10s\n", "TRANSPORT", "p50", "p90", "p99", "p99.9",
                 "max");
    for (std::size_t t = 0; t < transports.size(); ++t) {
      const Percentiles& p = result[t];
      std::fprintf(out, "%-12s %8.2fus %8.2fus %8.2fus %8.2fus %8.2fus\n", transports[t].c_str(),
                   micros(p.p50), micros(p.p90), micros(p.p99), micros(p.p999), micros(p.max));
    }
    for (std::size_t t = 1; t < transports.size(); ++t) {
      if (result[t].p50 > 0)
        std::fprintf(out, "ferry's p50 is %.2fx %s's\n",
                     static_cast<double>(result[0].p50) / static_cast<double>(result[t].p50),
                     transports[t].c_str());
    }
  }
  std::fflush(out);
  return failures == 0 ? 0 : 1;
}

}  // namespace ferry::bench
