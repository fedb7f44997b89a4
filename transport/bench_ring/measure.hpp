#pragma once
// The measurements: one run of one transport between two processes, the
// caller pinned to Options::cpu_a and a forked child to cpu_b. Nothing is
// allocated on a measured path.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "ferry/transport/ring.hpp"
#include "options.hpp"

namespace ferry::bench_ring {

// ----------------------------------------------------------------------------
// Shared state: two rings (ping A->B, pong B->A) and a control block, in an
// anonymous shared mapping made before fork.

struct alignas(transport::kCacheLine) Control {
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
  [[nodiscard]] Control& control() const {
    return *reinterpret_cast<Control*>(base + 2 * ring_size);
  }

  void reset(std::uint32_t capacity = kCapacity) const {
    const transport::RingGeometry g{capacity, kRingSlotSize, transport::RingMode::Spsc};
    if (!transport::format_ring(ping(), ring_size, g) ||
        !transport::format_ring(pong(), ring_size, g)) {
      std::abort();
    }
    new (&control()) Control{};
  }
};

// Maps the shared area once, for every run (exits 1 if it cannot).
[[nodiscard]] SharedArea map_shared();

struct Ctx {
  const Options& opt;
  const SharedArea& shm;
};

struct Throughput {
  double msgs_per_s = 0;
  double seconds = 0;
  bool ok = false;
};

struct Latency {
  std::int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  bool ok = false;
};

enum class RingWait { Spin, Futex, Batch };
enum class LatencyWait { Spin, Futex, Sleep };

// Throughput, one way: the receiver checks the sequence number in every message.
Throughput ring_throughput(const Ctx& ctx, RingWait wait);
Throughput unix_socket_throughput(const Ctx& ctx);  // SOCK_SEQPACKET
Throughput pipe_throughput(const Ctx& ctx);

// Latency, ping-pong: one-way = round trip / 2. `samples` is reused from run
// to run (reserved by the caller, so that no run allocates while it measures).
Latency ring_latency(const Ctx& ctx, LatencyWait wait, std::vector<std::int64_t>& samples);
Latency unix_socket_latency(const Ctx& ctx, std::vector<std::int64_t>& samples);
Latency pipe_latency(const Ctx& ctx, std::vector<std::int64_t>& samples);

}  // namespace ferry::bench_ring
