// ferry-bench-ring's output (report.hpp): the table and the --json document.
#include "report.hpp"

#include <cmath>
#include <cstdio>

#include "ferry/transport/ring.hpp"

namespace ferry::bench_ring {

namespace {

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

// `v` to `digits` decimals: the JSON carries the precision the figures have
// (and had when it was printed with %.Nf), not a double's 17 digits.
double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

// A rate as a whole number, as it always was in the JSON ("msgs_per_s": 17913298).
std::int64_t whole(double v) { return std::llround(v); }

}  // namespace

void print_heading(const Options& opt, const Summary& s) {
  const bench::Machine& m = s.machine;
  std::printf("ferry-bench-ring: shared-memory ring vs Unix socket vs pipe, same run\n");
  std::printf("machine: %s, %ld CPUs, %s, clocksource %s, %s\n", m.cpu.c_str(), m.cores,
              m.kernel.c_str(), m.clocksource.c_str(), m.compiler.c_str());
  std::printf(
      "setup:   processes pinned to CPUs %d and %d%s; %u-byte messages in %u-byte slots, ring "
      "capacity %u\n",
      opt.cpu_a, opt.cpu_b, s.pinned ? "" : " (pinning FAILED)", opt.size, kSlotSize, kCapacity);
  std::printf(
      "         %d interleaved repeats (medians shown); spin limit %u steps of %u pauses; clock "
      "read %lld ns\n\n",
      opt.repeat, transport::kDefaultSpinLimit, transport::pauses_per_spin_step(),
      static_cast<long long>(s.clock_read_ns));
  std::fflush(stdout);
}

void print_table(const Options& opt, const Summary& s) {
  std::printf(
      "throughput, one way (receiver checks the sequence)       msgs/s       MB/s   vs "
      "unix-socket\n");
  for (const auto& r : s.throughput) {
    char ratio[32] = "n/a";
    if (s.socket_msgs_per_s > 0) {
      std::snprintf(ratio, sizeof ratio, "x %.1f", r.msgs_per_s / s.socket_msgs_per_s);
    }
    std::printf("  %-50s %10s/s %9.1f   %s%s\n", r.label.c_str(), human_rate(r.msgs_per_s).c_str(),
                r.msgs_per_s * opt.size / 1e6, ratio, r.failed_runs ? "  (some runs FAILED)" : "");
  }
  std::printf(
      "\none-way latency (ping-pong, RTT/2)      p50       p90       p99     p99.9       max   p50 "
      "vs unix-socket\n");
  for (const auto& r : s.latency) {
    const Latency& m = r.median;
    char ratio[32] = "n/a";
    if (s.socket_p50_ns > 0 && m.p50 > 0) {
      std::snprintf(ratio, sizeof ratio, "1/%.1f",
                    static_cast<double>(s.socket_p50_ns) / static_cast<double>(m.p50));
    }
    std::printf("  %-34s %9s %9s %9s %9s %9s   %s%s\n", r.label.c_str(), human_ns(m.p50).c_str(),
                human_ns(m.p90).c_str(), human_ns(m.p99).c_str(), human_ns(m.p999).c_str(),
                human_ns(m.max).c_str(), ratio, r.failed_runs ? "  (some runs FAILED)" : "");
  }
  std::printf(
      "\n(latency rounds per run: %llu for spinning rings, %llu for sleeping transports; each "
      "sample\n"
      " includes one clock read; percentiles are medians over the repeats)\n",
      static_cast<unsigned long long>(opt.spin_rounds),
      static_cast<unsigned long long>(opt.sleep_rounds));
  const double tput_ratio = s.socket_msgs_per_s > 0 ? s.ring_msgs_per_s / s.socket_msgs_per_s : 0;
  const double lat_ratio =
      s.ring_p50_ns > 0 && s.socket_p50_ns > 0
          ? static_cast<double>(s.socket_p50_ns) / static_cast<double>(s.ring_p50_ns)
          : 0;
  if (tput_ratio > 0 && lat_ratio > 0) {
    std::printf(
        "targets: ring throughput >= 10x unix socket: %s (x%.1f); spinning p50 <= 1/20 of unix "
        "socket: %s (1/%.1f)\n",
        tput_ratio >= 10 ? "met" : "NOT met", tput_ratio, lat_ratio >= 20 ? "met" : "NOT met",
        lat_ratio);
  }
  if (s.failed_runs != 0) {
    std::printf("%d runs FAILED (sequence errors or a peer that did not answer)\n", s.failed_runs);
  }
}

nlohmann::ordered_json to_json(const Options& opt, const Summary& s) {
  using nlohmann::ordered_json;
  ordered_json throughput = ordered_json::array();
  for (const auto& r : s.throughput) {
    const double vs_socket = s.socket_msgs_per_s > 0 ? r.msgs_per_s / s.socket_msgs_per_s : 0.0;
    throughput.push_back({{"transport", r.transport},
                          {"msgs_per_s", whole(r.msgs_per_s)},
                          {"bytes_per_s", whole(r.msgs_per_s * opt.size)},
                          {"seconds", rounded(r.seconds, 3)},
                          {"vs_unix_socket", rounded(vs_socket, 2)}});
  }
  ordered_json latency = ordered_json::array();
  for (const auto& r : s.latency) {
    const double vs_socket = s.socket_p50_ns > 0 ? static_cast<double>(r.median.p50) /
                                                       static_cast<double>(s.socket_p50_ns)
                                                 : 0.0;
    latency.push_back({{"transport", r.transport},
                       {"p50_ns", r.median.p50},
                       {"p90_ns", r.median.p90},
                       {"p99_ns", r.median.p99},
                       {"p999_ns", r.median.p999},
                       {"max_ns", r.median.max},
                       {"p50_vs_unix_socket", rounded(vs_socket, 4)}});
  }
  const bench::Machine& m = s.machine;
  return ordered_json{
      {"machine",
       {{"cpu", m.cpu},
        {"cores", m.cores},
        {"kernel", m.kernel},
        {"clocksource", m.clocksource},
        {"compiler", m.compiler}}},
      {"cpus", {opt.cpu_a, opt.cpu_b}},
      {"pinned", s.pinned},
      {"repeat", opt.repeat},
      {"slot_size", kSlotSize},
      {"capacity", kCapacity},
      {"spin_limit", transport::kDefaultSpinLimit},
      {"clock_read_ns", s.clock_read_ns},
      {"failed_runs", s.failed_runs},
      {"throughput",
       {{"size", opt.size}, {"seconds", rounded(s.ring_seconds, 3)}, {"results", throughput}}},
      {"latency",
       {{"size", opt.size},
        {"rounds", opt.spin_rounds},
        {"sleep_rounds", opt.sleep_rounds},
        {"results", latency}}},
  };
}

}  // namespace ferry::bench_ring
