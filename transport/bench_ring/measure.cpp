// ferry-bench-ring's measurements (measure.hpp): the ring, a Unix socket
// and a pipe, each between two pinned processes.
#include "measure.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <expected>
#include <functional>
#include <span>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/machine.hpp"
#include "ferry/bench/percentiles.hpp"
#include "ferry/bench/spin.hpp"

namespace ferry::bench_ring {

using namespace ferry::transport;
using ferry::bench::now_ns;
using ferry::bench::pin_to_cpu;
using ferry::bench::spin_until;

SharedArea map_shared() {
  SharedArea a;
  a.ring_size = ring_bytes({kCapacity, kRingSlotSize, RingMode::Spsc});
  a.total = 2 * a.ring_size + sizeof(Control);
  void* p = ::mmap(nullptr, a.total, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("ferry-bench-ring: mmap");
    std::exit(1);
  }
  a.base = static_cast<std::byte*>(p);
  return a;
}

namespace {

constexpr auto kRingTimeout = std::chrono::seconds(5);

// ----------------------------------------------------------------------------
// Runs `child` in a forked process pinned to cpu_b while the caller (pinned to
// cpu_a) runs `parent`. Returns false if the child failed.

bool run_pair(const Ctx& ctx, const std::function<int()>& child,
              const std::function<void(pid_t)>& parent) {
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

// Receiver side shared by all transports: `recv_one(buf)` returns the length
// received (or -1). Times messages warmup..count-1.
template <class RecvOne>
int receive_and_time(Control& c, std::uint64_t warmup, std::uint64_t count, std::uint32_t size,
                     RecvOne&& recv_one) {
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

}  // namespace

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
          if (!spin_until(
                  [&] { return (r = consumer->try_pop(out)) || r.error() != RingError::Empty; }))
            return -1;
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
          // The batch's messages back to back, as stage_many takes them.
          std::array<std::byte, kBatch * kSlotSize> storage{};
          for (std::uint64_t i = 0; i < total;) {
            const std::size_t k =
                static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, total - i));
            for (std::size_t j = 0; j < k; ++j) fill(storage.data() + j * size, size, i + j);
            std::size_t sent = 0;
            while (sent < k) {
              const std::size_t n =
                  producer->stage_many(storage.data() + sent * size, k - sent, size, 0, {});
              if (n != 0) {
                producer->publish();
                sent += n;
                continue;
              }
              // Nothing staged: full, or room made meanwhile, or corrupt
              // indices. try_push tells which (and pushes one if it can).
              auto one = producer->try_push(std::span(storage).subspan(sent * size, size));
              if (one) {
                ++sent;
              } else if (one.error() == RingError::Full) {
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

namespace {

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

}  // namespace

Latency ring_latency(const Ctx& ctx, LatencyWait wait, std::vector<std::int64_t>& samples) {
  const std::uint64_t rounds =
      wait == LatencyWait::Sleep ? ctx.opt.sleep_rounds : ctx.opt.spin_rounds;
  const std::uint64_t total = rounds + std::max<std::uint64_t>(100, rounds / 10);
  const std::uint32_t size = ctx.opt.size;
  const std::uint32_t spin = wait == LatencyWait::Sleep ? 0 : kDefaultSpinLimit;
  ctx.shm.reset(std::getenv("LATCAP") ? static_cast<std::uint32_t>(std::atoi(std::getenv("LATCAP")))
                                      : kCapacity);
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

namespace {

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
                 ::read(ping_read, reply.data(), size) == static_cast<ssize_t>(size) &&
                 seq_of(reply.data()) == i;
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

}  // namespace

Throughput unix_socket_throughput(const Ctx& ctx) {
  const auto sv = make_socketpair();
  return fd_throughput(ctx, {sv[1], sv[0]});
}

Throughput pipe_throughput(const Ctx& ctx) {
  const auto p = make_pipe();
  return fd_throughput(ctx, {p[0], p[1]});
}

Latency unix_socket_latency(const Ctx& ctx, std::vector<std::int64_t>& samples) {
  const auto sv = make_socketpair();
  auto l = fd_latency(ctx, sv[0], sv[0], sv[1], sv[1], samples);
  ::close(sv[0]);
  ::close(sv[1]);
  return l;
}

Latency pipe_latency(const Ctx& ctx, std::vector<std::int64_t>& samples) {
  const auto a = make_pipe();
  const auto b = make_pipe();
  auto l = fd_latency(ctx, a[1], b[0], a[0], b[1], samples);
  for (int fd : {a[0], a[1], b[0], b[1]}) ::close(fd);
  return l;
}

}  // namespace ferry::bench_ring
