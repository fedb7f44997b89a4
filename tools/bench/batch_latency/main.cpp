// ferry-bench-batch-latency: how long the LAST sample of a burst of 64
// takes to arrive when the burst is one publish_many() call, against 64
// single publish() calls, and against one lone sample (DESIGN 1.4a).
//
// One ping-pong process pair in a private domain with its own ferryd: the
// publisher sends a burst (the last sample flagged), the subscriber polls
// take_many() until it sees the flag and answers with one sample; the
// three kinds of burst are interleaved round by round. The last sample's
// one-way latency is the round trip less half a lone sample's round trip
// (the answer's leg), reported at p50/p90/p99 (medians of the runs).
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <ferry/ferry.hpp>
#include <span>
#include <string>
#include <vector>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/machine.hpp"
#include "ferry/bench/percentiles.hpp"
#include "harness/private_domain.hpp"

struct Msg {
  std::uint64_t seq;
  std::uint64_t last;  // 1 on the burst's last sample
  std::uint64_t pad[6];
};
FERRY_TYPE(Msg);
static_assert(sizeof(Msg) == 64);

namespace {

constexpr std::size_t kBurst = 64;
constexpr int kRounds = 20000;  // per kind and run
constexpr int kWarmup = 2000;
constexpr int kRuns = 3;
enum Kind : int { kBatch = 0, kSingles = 1, kLone = 2 };
constexpr std::array<const char*, 3> kKindNames{"publish_many(64)", "64 x publish()",
                                                "1 x publish()"};

const std::string kYaml =
    "types:\n"
    "  Msg: { size: 64, align: 8 }\n"
    "topics:\n"
    "  - { name: ping, type: Msg, capacity: 128, policy: block }\n"
    "  - { name: pong, type: Msg, capacity: 4, policy: block }\n";

int echo_side(int cpu) {
  (void)ferry::bench::pin_to_cpu(cpu);
  ferry::Node node{"echo"};
  auto ping = node.subscriber<Msg>("ping");
  auto pong = node.publisher<Msg>("pong");
  while (ping.publisher_count() == 0 || pong.subscriber_count() == 0) ::usleep(1000);
  std::array<Msg, kBurst> buf{};
  for (;;) {
    const std::size_t n = ping.take_many(buf);
    for (std::size_t i = 0; i < n; ++i) {
      if (buf[i].last == 2) return 0;  // the end
      if (buf[i].last == 1) (void)pong.publish(buf[i]);
    }
  }
}

}  // namespace

int main() {
  using namespace ferry::bench;
  PrivateDomain domain;
  domain.start_daemon(kYaml);
  domain.enter();
  const pid_t child = ::fork();
  if (child == 0) ::_exit(echo_side(1));
  (void)pin_to_cpu(0);
  int code = 0;
  {
    ferry::Node node{"burst"};
    auto ping = node.publisher<Msg>("ping");
    auto pong = node.subscriber<Msg>("pong");
    while (ping.subscriber_count() == 0 || pong.publisher_count() == 0) ::usleep(1000);
    std::array<Msg, kBurst> burst{};
    std::array<std::vector<Percentiles>, 3> runs;
    std::uint64_t seq = 0;
    for (int run = 0; run < kRuns; ++run) {
      std::array<std::vector<std::int64_t>, 3> rtt;
      for (int round = 0; round < 3 * (kRounds + kWarmup); ++round) {
        const int kind = round % 3;
        const std::size_t n = kind == kLone ? 1 : kBurst;
        for (std::size_t i = 0; i < n; ++i) burst[i] = Msg{seq++, i + 1 == n ? 1U : 0U, {}};
        const std::int64_t t0 = now_ns();
        if (kind == kBatch) {
          (void)ping.publish_many(std::span<const Msg>(burst.data(), n));
        } else {
          for (std::size_t i = 0; i < n; ++i) (void)ping.publish(burst[i]);
        }
        std::optional<ferry::Sample<Msg>> answer;
        while (!(answer = pong.take())) {
        }
        const std::int64_t t1 = now_ns();
        if (round >= 3 * kWarmup) rtt[kind].push_back(t1 - t0);
      }
      for (int k = 0; k < 3; ++k) runs[k].push_back(percentiles(rtt[k]));
    }
    burst[0] = Msg{seq, 2, {}};
    (void)ping.publish(burst[0]);
    const Percentiles lone = median_of(runs[kLone]);
    fmt::print(
        "ferry-bench-batch-latency: 64 B samples, bursts of {}, {} rounds x {} runs, "
        "spinning, CPUs 0 and 1\n",
        kBurst, kRounds, kRuns);
    fmt::print("{:<20} {:>10} {:>10} {:>10} {:>16}\n", "burst", "rtt p50", "rtt p90", "rtt p99",
               "last sample p50");
    for (int k = 0; k < 3; ++k) {
      const Percentiles p = median_of(runs[k]);
      fmt::print("{:<20} {:>8} ns {:>7} ns {:>7} ns {:>13} ns\n", kKindNames[k], p.p50, p.p90,
                 p.p99, p.p50 - lone.p50 / 2);
    }
  }
  int status = 0;
  (void)::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) code = 1;
  return code;
}
