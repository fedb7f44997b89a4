// ferry-bench-ring: the shared-memory ring against a Unix domain socket
// (SOCK_SEQPACKET) and a pipe, measured in the same run.
//
// Two processes pinned to different CPUs. Throughput: one way, the receiver
// checks the sequence number in every message. Latency: ping-pong, one-way =
// round trip / 2. Runs are interleaved (A B C ... A B C ...) --repeat times
// and the medians are printed, with ratios against the Unix socket. Nothing
// is allocated on a measured path.

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/machine.hpp"
#include "ferry/bench/percentiles.hpp"
#include "ferry/bench/spin.hpp"
#include "ferry/transport/ring.hpp"

namespace {

using namespace ferry::transport;
// Shared with `ferry bench` (tools/bench): machine description, pinning,
// the clock, spin waits and percentiles.
using ferry::bench::describe_machine;
using ferry::bench::Machine;
using ferry::bench::median;
using ferry::bench::now_ns;
using ferry::bench::pin_to_cpu;
using ferry::bench::spin_until;

constexpr std::uint32_t kSlotSize = 64;
constexpr std::uint32_t kCapacity = 1024;
constexpr auto kRingTimeout = std::chrono::seconds(5);

// ----------------------------------------------------------------------------
// Options

struct Options {
  int repeat = 5;
  int cpu_a = 0;
  int cpu_b = 1;
  bool json = false;
  std::uint32_t size = kSlotSize - 8;          // payload bytes: a message fills one 64-byte slot
  std::uint64_t ring_messages = 5'000'000;     // throughput, ring transports
  std::uint64_t syscall_messages = 400'000;    // throughput, socket and pipe
  std::uint64_t spin_rounds = 200'000;         // latency, transports that usually do not sleep
  std::uint64_t sleep_rounds = 20'000;         // latency, transports that sleep every message
  std::vector<std::string> only;               // run only these transports (empty: all)
};

[[noreturn]] void usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: ferry-bench-ring [--repeat N] [--cpus A,B] [--quick] [--json]\n"
               "                        [--messages N] [--rounds N] [--only T,...]\n"
               "  --repeat N     interleaved repetitions, medians reported (default 5)\n"
               "  --cpus A,B     CPUs for the two processes (default 0,1)\n"
               "  --quick        short run (demo): fewer messages and rounds, 3 repeats\n"
               "  --json         machine-readable output (latency/throughput objects)\n"
               "  --messages N   ring throughput messages per run (socket/pipe: N/12)\n"
               "  --rounds N     ping-pong rounds per run (sleeping transports: N/10)\n"
               "  --only T[,T]   run only these transports (raw-ring, raw-ring-batch, raw-ring-futex,\n"
               "                 raw-ring-sleep, unix-socket, pipe)\n");
  std::exit(code);
}

std::uint64_t parse_u64(std::string_view s, const char* what) {
  char* end = nullptr;
  const std::string str(s);
  const unsigned long long v = std::strtoull(str.c_str(), &end, 10);
  if (str.empty() || end == nullptr || *end != '\0' || v == 0) {
    std::fprintf(stderr, "ferry-bench-ring: %s must be a positive integer, not '%s'\n", what, str.c_str());
    std::exit(2);
  }
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool repeat_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](const char* name) -> std::string_view {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ferry-bench-ring: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(0);
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--quick") {
      if (!repeat_set) o.repeat = 3;
      o.ring_messages = 1'000'000;
      o.syscall_messages = 100'000;
      o.spin_rounds = 50'000;
      o.sleep_rounds = 5'000;
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(std::min<std::uint64_t>(parse_u64(value("--repeat"), "--repeat"), 1000));
      repeat_set = true;
    } else if (a == "--messages") {
      o.ring_messages = parse_u64(value("--messages"), "--messages");
      o.syscall_messages = std::max<std::uint64_t>(1000, o.ring_messages / 12);
    } else if (a == "--rounds") {
      o.spin_rounds = parse_u64(value("--rounds"), "--rounds");
      o.sleep_rounds = std::max<std::uint64_t>(100, o.spin_rounds / 10);
    } else if (a == "--only") {
      const std::string v(value("--only"));
      for (std::size_t start = 0; start <= v.size();) {
        const std::size_t comma = std::min(v.find(',', start), v.size());
        if (comma > start) o.only.push_back(v.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (a == "--cpus") {
      const std::string_view v = value("--cpus");
      const auto comma = v.find(',');
      if (comma == std::string_view::npos) {
        std::fprintf(stderr, "ferry-bench-ring: --cpus takes two CPU numbers, e.g. --cpus 0,1\n");
        std::exit(2);
      }
      o.cpu_a = std::atoi(std::string(v.substr(0, comma)).c_str());
      o.cpu_b = std::atoi(std::string(v.substr(comma + 1)).c_str());
    } else {
      std::fprintf(stderr, "ferry-bench-ring: unknown option '%s' (see --help)\n", argv[i]);
      std::exit(2);
    }
  }
  return o;
}

// ----------------------------------------------------------------------------
// Shared state: two rings (ping A->B, pong B->A) and a control block, in an
// anonymous shared mapping made before fork.

struct alignas(kCacheLine) Control {
  std::atomic<std::uint32_t> ready{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::int64_t> elapsed_ns{0};
};

struct SharedArea {
  std::size_t ring_size = 0;
  std::byte* base = nullptr;
  std::size_t total = 0;
  [[nodiscard]] std::byte* ping() const { return base; }
  [[nodiscard]] std::byte* pong() const { return base + ring_size; }
  [[nodiscard]] Control& control() const { return *reinterpret_cast<Control*>(base + 2 * ring_size); }

  void reset(std::uint32_t capacity = kCapacity) const {
    const RingGeometry g{capacity, kSlotSize, RingMode::Spsc};
    if (!format_ring(ping(), ring_size, g) || !format_ring(pong(), ring_size, g)) std::abort();
    new (&control()) Control{};
  }
};

SharedArea map_shared() {
  SharedArea a;
  a.ring_size = ring_bytes({kCapacity, kSlotSize, RingMode::Spsc});
  a.total = 2 * a.ring_size + sizeof(Control);
  void* p = ::mmap(nullptr, a.total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("ferry-bench-ring: mmap");
    std::exit(1);
  }
  a.base = static_cast<std::byte*>(p);
  return a;
}

// ----------------------------------------------------------------------------
// Runs `child` in a forked process pinned to cpu_b while the caller (pinned to
// cpu_a) runs `parent`. Returns false if the child failed.

struct Ctx {
  const Options& opt;
  const SharedArea& shm;
};

bool run_pair(const Ctx& ctx, const std::function<int()>& child, const std::function<void(pid_t)>& parent) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("ferry-bench-ring: fork");
    std::exit(1);
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the benchmark
    (void)pin_to_cpu(ctx.opt.cpu_b);
    ::_exit(child());
  }
  parent(pid);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void wait_ready(const Control& c) {
  while (c.ready.load(std::memory_order_acquire) == 0) std::this_thread::yield();
}

void fill(std::byte* msg, std::uint32_t size, std::uint64_t seq) {
  std::memset(msg, 0x5a, size);
  std::memcpy(msg, &seq, sizeof seq);
}
std::uint64_t seq_of(const std::byte* msg) {
  std::uint64_t s;
  std::memcpy(&s, msg, sizeof s);
  return s;
}

// ----------------------------------------------------------------------------
// Throughput

enum class RingWait { Spin, Futex, Batch };

struct Throughput {
  double msgs_per_s = 0;
  double seconds = 0;
  bool ok = false;
};

// Receiver side shared by all transports: `recv_one(buf)` returns the length
// received (or -1). Times messages warmup..count-1.
template <class RecvOne>
int receive_and_time(Control& c, std::uint64_t warmup, std::uint64_t count, std::uint32_t size, RecvOne&& recv_one) {
  std::array<std::byte, kSlotSize> buf{};
  std::uint64_t errors = 0;
  std::int64_t start = 0;
  c.ready.store(1, std::memory_order_release);
  for (std::uint64_t i = 0; i < warmup + count; ++i) {
    if (i == warmup) start = now_ns();
    const long n = recv_one(buf.data());
    if (n < 0) return 3;
    if (static_cast<std::uint32_t>(n) != size || seq_of(buf.data()) != i) ++errors;
  }
  c.elapsed_ns.store(now_ns() - start, std::memory_order_relaxed);
  c.errors.store(errors, std::memory_order_release);
  return errors == 0 ? 0 : 4;
}

Throughput finish_throughput(bool ok, const Control& c, std::uint64_t count) {
  Throughput t;
  const std::int64_t ns = c.elapsed_ns.load();
  t.ok = ok && c.errors.load() == 0 && ns > 0;
  t.seconds = static_cast<double>(ns) / 1e9;
  t.msgs_per_s = t.ok ? static_cast<double>(count) / t.seconds : 0;
  return t;
}

Throughput ring_throughput(const Ctx& ctx, RingWait wait) {
  const std::uint64_t count = ctx.opt.ring_messages;
  const std::uint64_t warmup = count / 10;
  const std::uint32_t size = ctx.opt.size;
  ctx.shm.reset();
  Control& c = ctx.shm.control();
  const bool ok = run_pair(
      ctx,
      [&] {
        auto consumer = RingConsumer::attach(ctx.shm.ping(), ctx.shm.ring_size);
        if (!consumer) return 2;
        return receive_and_time(c, warmup, count, size, [&](std::byte* buf) -> long {
          std::span<std::byte> out(buf, kSlotSize);
          if (wait == RingWait::Futex) {
            auto r = consumer->pop(out, nullptr, kRingTimeout);
            return r ? static_cast<long>(*r) : -1;
          }
          std::expected<std::uint32_t, RingError> r = std::unexpected(RingError::Empty);
          if (!spin_until([&] { return (r = consumer->try_pop(out)) || r.error() != RingError::Empty; })) return -1;
          return r ? static_cast<long>(*r) : -1;
        });
      },
      [&](pid_t) {
        auto producer = RingProducer::attach(ctx.shm.ping(), ctx.shm.ring_size);
        if (!producer) return;
        wait_ready(c);
        std::array<std::byte, kSlotSize> msg{};
        const std::uint64_t total = warmup + count;
        if (wait == RingWait::Batch) {
          constexpr std::size_t kBatch = 16;
          std::array<std::array<std::byte, kSlotSize>, kBatch> storage{};
          std::array<std::span<const std::byte>, kBatch> msgs;
          for (std::uint64_t i = 0; i < total;) {
            const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, total - i));
            for (std::size_t j = 0; j < k; ++j) {
              fill(storage[j].data(), size, i + j);
              msgs[j] = std::span<const std::byte>(storage[j].data(), size);
            }
            std::size_t sent = 0;
            while (sent < k) {
              auto n = producer->try_push_batch(std::span(msgs).subspan(sent, k - sent));
              if (n) {
                sent += *n;
              } else if (n.error() == RingError::Full) {
                spin_wait_step();
              } else {
                return;
              }
            }
            i += k;
          }
          return;
        }
        for (std::uint64_t i = 0; i < total; ++i) {
          fill(msg.data(), size, i);
          const std::span<const std::byte> m(msg.data(), size);
          if (wait == RingWait::Futex) {
            if (!producer->push(m, 0, kRingTimeout)) return;
          } else if (!spin_until([&] { return producer->try_push(m).has_value(); })) {
            return;
          }
        }
      });
  return finish_throughput(ok, c, count);
}

// Socket or pipe: `fds` = {receiver's read end, sender's write end}.
Throughput fd_throughput(const Ctx& ctx, std::array<int, 2> fds) {
  const std::uint64_t count = ctx.opt.syscall_messages;
  const std::uint64_t warmup = count / 10;
  const std::uint32_t size = ctx.opt.size;
  ctx.shm.reset();
  Control& c = ctx.shm.control();
  const bool ok = run_pair(
      ctx,
      [&] {
        ::close(fds[1]);
        return receive_and_time(c, warmup, count, size, [&](std::byte* buf) -> long {
          const ssize_t n = ::read(fds[0], buf, size);
          return n <= 0 ? -1 : static_cast<long>(n);
        });
      },
      [&](pid_t) {
        wait_ready(c);
        std::array<std::byte, kSlotSize> msg{};
        for (std::uint64_t i = 0; i < warmup + count; ++i) {
          fill(msg.data(), size, i);
          if (::write(fds[1], msg.data(), size) != static_cast<ssize_t>(size)) break;
        }
      });
  ::close(fds[0]);
  ::close(fds[1]);
  return finish_throughput(ok, c, count);
}

// ----------------------------------------------------------------------------
// Latency (ping-pong)

struct Latency {
  std::int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  bool ok = false;
};

Latency percentiles(std::vector<std::int64_t>& one_way) {
  if (one_way.empty()) return {};
  const ferry::bench::Percentiles p = ferry::bench::percentiles(one_way);
  return Latency{p.p50, p.p90, p.p99, p.p999, p.max, true};
}

// The pinger's loop: `round_trip(i)` sends i and waits for the echo
// (false on failure). One clock read per round: each sample's end is the
// next sample's start.
template <class RoundTrip>
Latency ping(std::uint64_t rounds, std::vector<std::int64_t>& samples, RoundTrip&& round_trip) {
  const std::uint64_t warmup = std::max<std::uint64_t>(100, rounds / 10);
  for (std::uint64_t i = 0; i < warmup; ++i) {
    if (!round_trip(i)) return {};
  }
  samples.resize(rounds);  // before the measured loop: no allocation inside it
  std::int64_t t0 = now_ns();
  for (std::uint64_t i = 0; i < rounds; ++i) {
    if (!round_trip(warmup + i)) return {};
    const std::int64_t t1 = now_ns();
    samples[i] = (t1 - t0) / 2;
    t0 = t1;
  }
  return percentiles(samples);
}

enum class LatencyWait { Spin, Futex, Sleep };

Latency ring_latency(const Ctx& ctx, LatencyWait wait, std::vector<std::int64_t>& samples) {
  const std::uint64_t rounds = wait == LatencyWait::Sleep ? ctx.opt.sleep_rounds : ctx.opt.spin_rounds;
  const std::uint64_t total = rounds + std::max<std::uint64_t>(100, rounds / 10);
  const std::uint32_t size = ctx.opt.size;
  const std::uint32_t spin = wait == LatencyWait::Sleep ? 0 : kDefaultSpinLimit;
  ctx.shm.reset(std::getenv("LATCAP") ? static_cast<std::uint32_t>(std::atoi(std::getenv("LATCAP"))) : kCapacity);
  Control& c = ctx.shm.control();
  // One side: take a message (spinning or waiting) into buf.
  auto take = [&](RingConsumer& from, std::byte* buf) {
    std::span<std::byte> out(buf, kSlotSize);
    if (wait != LatencyWait::Spin) return from.pop(out, nullptr, kRingTimeout).has_value();
    return spin_until([&] { return from.try_pop(out).has_value(); });
  };
  auto give = [&](RingProducer& to, const std::byte* buf) {
    const std::span<const std::byte> m(buf, size);
    if (wait != LatencyWait::Spin) return to.push(m, 0, kRingTimeout).has_value();
    return to.try_push(m).has_value();  // capacity 1024, one message in flight: never full
  };
  Latency result;
  const bool ok = run_pair(
      ctx,
      [&] {
        auto in = RingConsumer::attach(ctx.shm.ping(), ctx.shm.ring_size);
        auto out = RingProducer::attach(ctx.shm.pong(), ctx.shm.ring_size);
        if (!in || !out) return 2;
        in->set_spin_limit(spin);
        c.ready.store(1, std::memory_order_release);
        std::array<std::byte, kSlotSize> buf{};
        for (std::uint64_t i = 0; i < total; ++i) {
          if (!take(*in, buf.data()) || !give(*out, buf.data())) return 3;
        }
        return 0;
      },
      [&](pid_t) {
        auto out = RingProducer::attach(ctx.shm.ping(), ctx.shm.ring_size);
        auto in = RingConsumer::attach(ctx.shm.pong(), ctx.shm.ring_size);
        if (!in || !out) return;
        in->set_spin_limit(spin);
        wait_ready(c);
        std::array<std::byte, kSlotSize> msg{};
        std::array<std::byte, kSlotSize> reply{};
        result = ping(rounds, samples, [&](std::uint64_t i) {
          fill(msg.data(), size, i);
          return give(*out, msg.data()) && take(*in, reply.data()) && seq_of(reply.data()) == i;
        });
      });
  result.ok = result.ok && ok;
  return result;
}

// Socket or pipe ping-pong: pinger writes to a[1] and reads b[0]; the echo
// side reads a[0] and writes b[1] (for a socketpair a == b, both ends duplex).
Latency fd_latency(const Ctx& ctx, int ping_write, int ping_read, int echo_read, int echo_write,
                   std::vector<std::int64_t>& samples) {
  const std::uint64_t rounds = ctx.opt.sleep_rounds;
  const std::uint64_t total = rounds + std::max<std::uint64_t>(100, rounds / 10);
  const std::uint32_t size = ctx.opt.size;
  ctx.shm.reset();
  Control& c = ctx.shm.control();
  Latency result;
  const bool ok = run_pair(
      ctx,
      [&] {
        c.ready.store(1, std::memory_order_release);
        std::array<std::byte, kSlotSize> buf{};
        for (std::uint64_t i = 0; i < total; ++i) {
          if (::read(echo_read, buf.data(), size) != static_cast<ssize_t>(size)) return 3;
          if (::write(echo_write, buf.data(), size) != static_cast<ssize_t>(size)) return 3;
        }
        return 0;
      },
      [&](pid_t) {
        wait_ready(c);
        std::array<std::byte, kSlotSize> msg{};
        std::array<std::byte, kSlotSize> reply{};
        result = ping(rounds, samples, [&](std::uint64_t i) {
          fill(msg.data(), size, i);
          return ::write(ping_write, msg.data(), size) == static_cast<ssize_t>(size) &&
                 ::read(ping_read, reply.data(), size) == static_cast<ssize_t>(size) && seq_of(reply.data()) == i;
        });
      });
  result.ok = result.ok && ok;
  return result;
}

std::array<int, 2> make_socketpair() {
  std::array<int, 2> sv{-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv.data()) != 0) {
    std::perror("ferry-bench-ring: socketpair");
    std::exit(1);
  }
  return sv;
}
std::array<int, 2> make_pipe() {
  std::array<int, 2> p{-1, -1};
  if (::pipe(p.data()) != 0) {
    std::perror("ferry-bench-ring: pipe");
    std::exit(1);
  }
  return p;
}

// ----------------------------------------------------------------------------
// Orchestration

struct TputCase {
  const char* transport;
  const char* label;
  std::function<Throughput(const Ctx&)> run;
  std::vector<Throughput> runs;
};
struct LatCase {
  const char* transport;
  const char* label;
  std::function<Latency(const Ctx&, std::vector<std::int64_t>&)> run;
  std::vector<Latency> runs;
};

double median_tput(const TputCase& c) {
  std::vector<double> v;
  for (const auto& r : c.runs) {
    if (r.ok) v.push_back(r.msgs_per_s);
  }
  return median(v);
}
double median_seconds(const TputCase& c) {
  std::vector<double> v;
  for (const auto& r : c.runs) {
    if (r.ok) v.push_back(r.seconds);
  }
  return median(v);
}
Latency median_latency(const LatCase& c) {
  std::vector<std::int64_t> p50, p90, p99, p999, mx;
  for (const auto& r : c.runs) {
    if (!r.ok) continue;
    p50.push_back(r.p50);
    p90.push_back(r.p90);
    p99.push_back(r.p99);
    p999.push_back(r.p999);
    mx.push_back(r.max);
  }
  Latency l;
  l.ok = !p50.empty();
  l.p50 = median(p50);
  l.p90 = median(p90);
  l.p99 = median(p99);
  l.p999 = median(p999);
  l.max = median(mx);
  return l;
}
int failures(const std::vector<Throughput>& v) {
  return static_cast<int>(std::count_if(v.begin(), v.end(), [](const Throughput& t) { return !t.ok; }));
}
int failures(const std::vector<Latency>& v) {
  return static_cast<int>(std::count_if(v.begin(), v.end(), [](const Latency& t) { return !t.ok; }));
}

std::string human_rate(double v) {
  char b[32];
  if (v >= 1e6) {
    std::snprintf(b, sizeof b, "%.2f M", v / 1e6);
  } else {
    std::snprintf(b, sizeof b, "%.1f k", v / 1e3);
  }
  return b;
}
std::string human_ns(std::int64_t ns) {
  char b[32];
  if (ns >= 10'000'000) {
    std::snprintf(b, sizeof b, "%.1f ms", static_cast<double>(ns) / 1e6);
  } else if (ns >= 10'000) {
    std::snprintf(b, sizeof b, "%.1f us", static_cast<double>(ns) / 1e3);
  } else {
    std::snprintf(b, sizeof b, "%lld ns", static_cast<long long>(ns));
  }
  return b;
}
std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o.push_back('\\');
    if (static_cast<unsigned char>(ch) >= 0x20) o.push_back(ch);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  const Machine machine = describe_machine();
  const bool pinned = pin_to_cpu(opt.cpu_a);
  if (!pinned) {
    std::fprintf(stderr, "ferry-bench-ring: cannot pin to CPU %d (have %ld CPUs); running unpinned\n", opt.cpu_a,
                 machine.cores);
  }
  const std::int64_t clock_cost = ferry::bench::clock_read_cost_ns();
  const SharedArea shm = map_shared();
  const Ctx ctx{opt, shm};

  std::vector<TputCase> tput = {
      {"raw-ring", "ring, spinning (try_push/try_pop)", [](const Ctx& c) { return ring_throughput(c, RingWait::Spin); }, {}},
      {"raw-ring-batch", "ring, batches of 16 (try_push_batch)",
       [](const Ctx& c) { return ring_throughput(c, RingWait::Batch); }, {}},
      {"raw-ring-futex", "ring, spin then futex (push/pop)",
       [](const Ctx& c) { return ring_throughput(c, RingWait::Futex); }, {}},
      {"unix-socket", "unix socket (SOCK_SEQPACKET)",
       [](const Ctx& c) {
         const auto sv = make_socketpair();
         return fd_throughput(c, {sv[1], sv[0]});
       },
       {}},
      {"pipe", "pipe",
       [](const Ctx& c) {
         const auto p = make_pipe();
         return fd_throughput(c, {p[0], p[1]});
       },
       {}},
  };
  std::vector<LatCase> lat = {
      {"raw-ring", "ring, spinning", [](const Ctx& c, auto& s) { return ring_latency(c, LatencyWait::Spin, s); }, {}},
      {"raw-ring-futex", "ring, spin then futex",
       [](const Ctx& c, auto& s) { return ring_latency(c, LatencyWait::Futex, s); }, {}},
      {"raw-ring-sleep", "ring, futex sleep every message",
       [](const Ctx& c, auto& s) { return ring_latency(c, LatencyWait::Sleep, s); }, {}},
      {"unix-socket", "unix socket (SOCK_SEQPACKET)",
       [](const Ctx& c, auto& s) {
         const auto sv = make_socketpair();
         auto l = fd_latency(c, sv[0], sv[0], sv[1], sv[1], s);
         ::close(sv[0]);
         ::close(sv[1]);
         return l;
       },
       {}},
      {"pipe", "pipe",
       [](const Ctx& c, auto& s) {
         const auto a = make_pipe();
         const auto b = make_pipe();
         auto l = fd_latency(c, a[1], b[0], a[0], b[1], s);
         for (int fd : {a[0], a[1], b[0], b[1]}) ::close(fd);
         return l;
       },
       {}},
  };
  auto selected = [&](const char* transport) {
    return opt.only.empty() || std::find(opt.only.begin(), opt.only.end(), transport) != opt.only.end();
  };

  if (!opt.json) {
    std::printf("ferry-bench-ring: shared-memory ring vs Unix socket vs pipe, same run\n");
    std::printf("machine: %s, %ld CPUs, %s, clocksource %s, %s\n", machine.cpu.c_str(), machine.cores,
                machine.kernel.c_str(), machine.clocksource.c_str(), machine.compiler.c_str());
    std::printf("setup:   processes pinned to CPUs %d and %d%s; %u-byte messages in %u-byte slots, ring capacity %u\n",
                opt.cpu_a, opt.cpu_b, pinned ? "" : " (pinning FAILED)", opt.size, kSlotSize, kCapacity);
    std::printf("         %d interleaved repeats (medians shown); spin limit %u steps of %u pauses; clock read %lld ns\n\n",
                opt.repeat, kDefaultSpinLimit, pauses_per_spin_step(), static_cast<long long>(clock_cost));
    std::fflush(stdout);
  }

  const bool progress = !opt.json && ::isatty(STDERR_FILENO) != 0;
  std::vector<std::int64_t> samples;
  samples.reserve(std::max(opt.spin_rounds, opt.sleep_rounds));
  for (int r = 0; r < opt.repeat; ++r) {
    for (auto& c : tput) {
      if (selected(c.transport)) c.runs.push_back(c.run(ctx));
    }
    for (auto& c : lat) {
      if (selected(c.transport)) c.runs.push_back(c.run(ctx, samples));
    }
    if (progress) {
      std::fprintf(stderr, "  repeat %d/%d done\r", r + 1, opt.repeat);
      std::fflush(stderr);
    }
  }
  if (progress) std::fprintf(stderr, "                      \r");

  // tput[0] / lat[0]: the spinning ring; [3]: the Unix socket.
  const double socket_tput = median_tput(tput[3]);
  const Latency socket_lat = median_latency(lat[3]);
  const double tput_ratio = socket_tput > 0 ? median_tput(tput[0]) / socket_tput : 0;
  const Latency spin_lat = median_latency(lat[0]);
  const double lat_ratio =
      spin_lat.p50 > 0 && socket_lat.p50 > 0 ? static_cast<double>(socket_lat.p50) / static_cast<double>(spin_lat.p50) : 0;
  int failed = 0;
  for (const auto& c : tput) failed += failures(c.runs);
  for (const auto& c : lat) failed += failures(c.runs);

  if (opt.json) {
    std::printf("{\"machine\": {\"cpu\": \"%s\", \"cores\": %ld, \"kernel\": \"%s\", \"clocksource\": \"%s\", "
                "\"compiler\": \"%s\"},\n",
                json_escape(machine.cpu).c_str(), machine.cores, json_escape(machine.kernel).c_str(),
                json_escape(machine.clocksource).c_str(), json_escape(machine.compiler).c_str());
    std::printf(" \"cpus\": [%d, %d], \"pinned\": %s, \"repeat\": %d, \"slot_size\": %u, \"capacity\": %u, "
                "\"spin_limit\": %u, \"clock_read_ns\": %lld, \"failed_runs\": %d,\n",
                opt.cpu_a, opt.cpu_b, pinned ? "true" : "false", opt.repeat, kSlotSize, kCapacity, kDefaultSpinLimit,
                static_cast<long long>(clock_cost), failed);
    std::printf(" \"throughput\": {\"size\": %u, \"seconds\": %.3f, \"results\": [", opt.size, median_seconds(tput[0]));
    const char* sep = "";
    for (const auto& c : tput) {
      if (c.runs.empty()) continue;
      const double m = median_tput(c);
      std::printf("%s\n   {\"transport\": \"%s\", \"msgs_per_s\": %.0f, \"bytes_per_s\": %.0f, \"seconds\": %.3f, "
                  "\"vs_unix_socket\": %.2f}",
                  sep, c.transport, m, m * opt.size, median_seconds(c), socket_tput > 0 ? m / socket_tput : 0.0);
      sep = ",";
    }
    std::printf("]},\n \"latency\": {\"size\": %u, \"rounds\": %llu, \"sleep_rounds\": %llu, \"results\": [", opt.size,
                static_cast<unsigned long long>(opt.spin_rounds), static_cast<unsigned long long>(opt.sleep_rounds));
    sep = "";
    for (const auto& c : lat) {
      if (c.runs.empty()) continue;
      const Latency m = median_latency(c);
      std::printf("%s\n   {\"transport\": \"%s\", \"p50_ns\": %lld, \"p90_ns\": %lld, \"p99_ns\": %lld, "
                  "\"p999_ns\": %lld, \"max_ns\": %lld, \"p50_vs_unix_socket\": %.4f}",
                  sep, c.transport, static_cast<long long>(m.p50), static_cast<long long>(m.p90),
                  static_cast<long long>(m.p99), static_cast<long long>(m.p999), static_cast<long long>(m.max),
                  socket_lat.p50 > 0 ? static_cast<double>(m.p50) / static_cast<double>(socket_lat.p50) : 0.0);
      sep = ",";
    }
    std::printf("]}}\n");
    return failed == 0 ? 0 : 1;
  }

  std::printf("throughput, one way (receiver checks the sequence)       msgs/s       MB/s   vs unix-socket\n");
  for (const auto& c : tput) {
    if (c.runs.empty()) continue;
    const double m = median_tput(c);
    char ratio[32] = "n/a";
    if (socket_tput > 0) std::snprintf(ratio, sizeof ratio, "x %.1f", m / socket_tput);
    std::printf("  %-50s %10s/s %9.1f   %s%s\n", c.label, human_rate(m).c_str(), m * opt.size / 1e6, ratio,
                failures(c.runs) ? "  (some runs FAILED)" : "");
  }
  std::printf("\none-way latency (ping-pong, RTT/2)      p50       p90       p99     p99.9       max   p50 vs unix-socket\n");
  for (const auto& c : lat) {
    if (c.runs.empty()) continue;
    const Latency m = median_latency(c);
    char ratio[32] = "n/a";
    if (socket_lat.p50 > 0 && m.p50 > 0) {
      std::snprintf(ratio, sizeof ratio, "1/%.1f", static_cast<double>(socket_lat.p50) / static_cast<double>(m.p50));
    }
    std::printf("  %-34s %9s %9s %9s %9s %9s   %s%s\n", c.label, human_ns(m.p50).c_str(), human_ns(m.p90).c_str(),
                human_ns(m.p99).c_str(), human_ns(m.p999).c_str(), human_ns(m.max).c_str(), ratio,
                failures(c.runs) ? "  (some runs FAILED)" : "");
  }
  std::printf("\n(latency rounds per run: %llu for spinning rings, %llu for sleeping transports; each sample\n"
              " includes one clock read; percentiles are medians over the repeats)\n",
              static_cast<unsigned long long>(opt.spin_rounds), static_cast<unsigned long long>(opt.sleep_rounds));
  if (tput_ratio > 0 && lat_ratio > 0) {
    std::printf("targets: ring throughput >= 10x unix socket: %s (x%.1f); spinning p50 <= 1/20 of unix socket: %s (1/%.1f)\n",
                tput_ratio >= 10 ? "met" : "NOT met", tput_ratio, lat_ratio >= 20 ? "met" : "NOT met", lat_ratio);
  }
  if (failed != 0) std::printf("%d runs FAILED (sequence errors or a peer that did not answer)\n", failed);
  return failed == 0 ? 0 : 1;
}
