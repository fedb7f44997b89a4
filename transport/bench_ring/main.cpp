// ferry-bench-ring: the shared-memory ring against a Unix domain socket
// (SOCK_SEQPACKET) and a pipe, measured in the same run.
//
// Two processes pinned to different CPUs. Throughput: one way, the receiver
// checks the sequence number in every message. Latency: ping-pong, one-way =
// round trip / 2. Runs are interleaved (A B C ... A B C ...) --repeat times
// and the medians are printed, with ratios against the Unix socket. Nothing
// is allocated on a measured path.
//
// options.cpp parses the command line, measure.cpp runs one transport once,
// report.cpp prints the medians; this file runs the cases and takes the medians.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/machine.hpp"
#include "ferry/bench/percentiles.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "report.hpp"

namespace {

using namespace ferry::bench_ring;
using ferry::bench::median;

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
  return static_cast<int>(
      std::count_if(v.begin(), v.end(), [](const Throughput& t) { return !t.ok; }));
}
int failures(const std::vector<Latency>& v) {
  return static_cast<int>(
      std::count_if(v.begin(), v.end(), [](const Latency& t) { return !t.ok; }));
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  Summary summary;
  summary.machine = ferry::bench::describe_machine();
  summary.pinned = ferry::bench::pin_to_cpu(opt.cpu_a);
  if (!summary.pinned) {
    std::fprintf(stderr,
                 "ferry-bench-ring: cannot pin to CPU %d (have %ld CPUs); running unpinned\n",
                 opt.cpu_a, summary.machine.cores);
  }
  summary.clock_read_ns = ferry::bench::clock_read_cost_ns();
  const SharedArea shm = map_shared();
  const Ctx ctx{opt, shm};

  std::vector<TputCase> tput = {
      {"raw-ring",
       "ring, spinning (try_push/try_pop)",
       [](const Ctx& c) { return ring_throughput(c, RingWait::Spin); },
       {}},
      {"raw-ring-batch",
       "ring, batches of 16 (stage_many + publish)",
       [](const Ctx& c) { return ring_throughput(c, RingWait::Batch); },
       {}},
      {"raw-ring-futex",
       "ring, spin then futex (push/pop)",
       [](const Ctx& c) { return ring_throughput(c, RingWait::Futex); },
       {}},
      {"unix-socket", "unix socket (SOCK_SEQPACKET)", unix_socket_throughput, {}},
      {"pipe", "pipe", pipe_throughput, {}},
  };
  std::vector<LatCase> lat = {
      {"raw-ring",
       "ring, spinning",
       [](const Ctx& c, auto& s) { return ring_latency(c, LatencyWait::Spin, s); },
       {}},
      {"raw-ring-futex",
       "ring, spin then futex",
       [](const Ctx& c, auto& s) { return ring_latency(c, LatencyWait::Futex, s); },
       {}},
      {"raw-ring-sleep",
       "ring, futex sleep every message",
       [](const Ctx& c, auto& s) { return ring_latency(c, LatencyWait::Sleep, s); },
       {}},
      {"unix-socket", "unix socket (SOCK_SEQPACKET)", unix_socket_latency, {}},
      {"pipe", "pipe", pipe_latency, {}},
  };
  auto selected = [&](const char* transport) {
    return opt.only.empty() ||
           std::find(opt.only.begin(), opt.only.end(), transport) != opt.only.end();
  };

  if (!opt.json) print_heading(opt, summary);

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
  summary.ring_msgs_per_s = median_tput(tput[0]);
  summary.ring_seconds = median_seconds(tput[0]);
  summary.ring_p50_ns = median_latency(lat[0]).p50;
  summary.socket_msgs_per_s = median_tput(tput[3]);
  summary.socket_p50_ns = median_latency(lat[3]).p50;
  for (const auto& c : tput) {
    summary.failed_runs += failures(c.runs);
    if (!c.runs.empty()) {
      summary.throughput.push_back(
          {c.transport, c.label, median_tput(c), median_seconds(c), failures(c.runs)});
    }
  }
  for (const auto& c : lat) {
    summary.failed_runs += failures(c.runs);
    if (!c.runs.empty())
      summary.latency.push_back({c.transport, c.label, median_latency(c), failures(c.runs)});
  }

  if (opt.json) {
    // Invalid UTF-8 (a CPU name read from /proc) is replaced, not thrown on.
    const auto json =
        to_json(opt, summary).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::printf("%s\n", json.c_str());
  } else {
    print_table(opt, summary);
  }
  return summary.failed_runs == 0 ? 0 : 1;
}
