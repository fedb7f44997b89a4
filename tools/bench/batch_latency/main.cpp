// ferry-bench-batch-latency: how long the LAST sample of a burst of 64
// takes to arrive when the burst is one publish_many() call, against 64
// single publish() calls, and against one lone sample (docs/batches.md).
//
// One ping-pong process pair in a private domain with its own ferryd: the
// publisher sends a burst (the last sample flagged), the subscriber polls
// take_many() until it sees the flag and answers with one sample; the
// three kinds of burst are interleaved round by round. The last sample's
// one-way latency is the round trip less half a lone sample's round trip
// (the answer's leg), reported at p50/p90/p99 (medians of the runs).
//
// Usage: ferry-bench-batch-latency [--rounds N] [--runs N]
// A side that stops answering (its node declared dead, a stalled machine)
// ends the run within kAnswerWait with one sentence and exit code 1; bad
// flags give exit code 2.
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ferry/ferry.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
constexpr int kWarmup = 2000;
// How long a side waits for the other before it gives up on the run.
constexpr std::int64_t kAnswerWait = 5'000'000'000;  // ns
// Empty polls between two looks at the clock while waiting.
constexpr unsigned kPollsPerClockRead = 4096;

struct Options {
  int rounds = 20000;  // measured per kind and run
  int runs = 3;
};
enum Kind : int { kBatch = 0, kSingles = 1, kLone = 2 };
constexpr std::array<const char*, 3> kKindNames{"publish_many(64)", "64 x publish()",
                                                "1 x publish()"};

const std::string kYaml =
    "types:\n"
    "  Msg: { size: 64, align: 8 }\n"
    "topics:\n"
    "  - { name: ping, type: Msg, capacity: 128, policy: block }\n"
    "  - { name: pong, type: Msg, capacity: 4, policy: block }\n";

// --rounds N / --runs N, each a whole number from 1; nullopt after saying why.
std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    int* target = flag == "--rounds" ? &options.rounds : flag == "--runs" ? &options.runs : nullptr;
    if (target == nullptr) {
      std::fprintf(stderr,
                   "ferry-bench-batch-latency: unknown argument '%s'; usage: "
                   "ferry-bench-batch-latency [--rounds N] [--runs N]\n",
                   argv[i]);
      return std::nullopt;
    }
    const std::string_view value = i + 1 < argc ? argv[++i] : "";
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), *target);
    if (error != std::errc{} || end != value.data() + value.size() || *target < 1) {
      std::fprintf(stderr,
                   "ferry-bench-batch-latency: %s needs a whole number from 1, not '%.*s'\n",
                   argv[i - 1], static_cast<int>(value.size()), value.data());
      return std::nullopt;
    }
  }
  return options;
}

// Waits until both ports see their peer; false after kAnswerWait.
bool await_peers(const auto& in, const auto& out) {
  const std::int64_t give_up = ferry::bench::now_ns() + kAnswerWait;
  while (in.publisher_count() == 0 || out.subscriber_count() == 0) {
    if (ferry::bench::now_ns() > give_up) return false;
    ::usleep(1000);
  }
  return true;
}

int echo_side(int cpu) {
  // The measuring side gone (killed, or gave up), the echo goes too.
  (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
  (void)ferry::bench::pin_to_cpu(cpu);
  ferry::Node node{"echo"};
  auto ping = node.subscriber<Msg>("ping");
  auto pong = node.publisher<Msg>("pong");
  if (!await_peers(ping, pong)) return 3;
  std::array<Msg, kBurst> buf{};
  for (;;) {
    const std::size_t n = ping.take_many(buf).value_or(0);
    for (std::size_t i = 0; i < n; ++i) {
      if (buf[i].last == 2) return 0;  // the end
      if (buf[i].last == 1) (void)pong.publish(buf[i]);
    }
  }
}

// Waits for the echo's exit up to kAnswerWait, then kills it; its exit code
// (128 + signal when killed).
int reap(pid_t child) {
  const std::int64_t give_up = ferry::bench::now_ns() + kAnswerWait;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (ferry::bench::now_ns() > give_up) {
      ::kill(child, SIGKILL);
      (void)::waitpid(child, &status, 0);
      break;
    }
    ::usleep(10000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ferry::bench;
  const auto options = parse_options(argc, argv);
  if (!options) return 2;
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
    if (!await_peers(pong, ping)) {
      std::fprintf(stderr,
                   "ferry-bench-batch-latency: the echo process did not join within %lld s\n",
                   static_cast<long long>(kAnswerWait / 1'000'000'000));
      ::kill(child, SIGKILL);
      (void)reap(child);
      return 1;
    }
    std::array<Msg, kBurst> burst{};
    std::array<std::vector<Percentiles>, 3> runs;
    std::uint64_t seq = 0;
    const int rounds = options->rounds;
    const int warmup = std::min(kWarmup, rounds);  // a short run stays short
    for (int run = 0; run < options->runs; ++run) {
      std::array<std::vector<std::int64_t>, 3> rtt;
      for (int round = 0; round < 3 * (rounds + warmup); ++round) {
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
        for (unsigned polls = 1; !(answer = pong.take()); ++polls) {
          // The clock only now and then: it is the measured path.
          if (polls % kPollsPerClockRead == 0 && now_ns() - t0 > kAnswerWait) {
            std::fprintf(stderr,
                         "ferry-bench-batch-latency: no answer to round %d of run %d within %lld "
                         "s; the echo process stopped answering\n",
                         round, run + 1, static_cast<long long>(kAnswerWait / 1'000'000'000));
            ::kill(child, SIGKILL);
            (void)reap(child);
            return 1;
          }
        }
        const std::int64_t t1 = now_ns();
        if (round >= 3 * warmup) rtt[kind].push_back(t1 - t0);
      }
      for (int k = 0; k < 3; ++k) runs[k].push_back(percentiles(rtt[k]));
    }
    burst[0] = Msg{seq, 2, {}};
    (void)ping.publish(burst[0]);
    const Percentiles lone = median_of(runs[kLone]);
    fmt::print(
        "ferry-bench-batch-latency: 64 B samples, bursts of {}, {} rounds x {} runs, "
        "spinning, CPUs 0 and 1\n",
        kBurst, rounds, options->runs);
    fmt::print("{:<20} {:>10} {:>10} {:>10} {:>16}\n", "burst", "rtt p50", "rtt p90", "rtt p99",
               "last sample p50");
    for (int k = 0; k < 3; ++k) {
      const Percentiles p = median_of(runs[k]);
      fmt::print("{:<20} {:>8} ns {:>7} ns {:>7} ns {:>13} ns\n", kKindNames[k], p.p50, p.p90,
                 p.p99, p.p50 - lone.p50 / 2);
    }
  }
  if (reap(child) != 0) code = 1;
  return code;
}
