// ferry bench latency|throughput|scale|fanout: registers the verbs; the measuring is in
// tools/bench (library ferry_bench).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ferry/bench/bench.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/units.hpp"
#include "usage.hpp"

namespace ferry::cli {

namespace {

// The flags both verbs share, as typed (parsed by ferry_bench).
struct CommonArgs {
  std::vector<std::string> sizes;
  std::vector<std::string> transports;
  std::vector<std::string> cpus;
  std::string wait = "spin";
  int repeat = 3;
  bool json = false;
};

void add_common(CLI::App& cmd, CommonArgs& a, const char* size_help) {
  cmd.add_option("--size", a.sizes, size_help)->delimiter(',');
  const std::string inline_max = config::format_size(config::kMaxInlineSample);
  cmd.add_option(
         "--transports", a.transports,
         fmt::format(
             "Transports to measure, in a list: ferry, ferry-copy, ferry-loan, ferry-waitset, "
             "ferry-fd, raw-ring, unix-socket, pipe, iceoryx (default all but ferry-copy, "
             "ferry-loan, "
             "ferry-waitset and ferry-fd). ferry is "
             "what the full API gives at each size: publish(const T&) / take() up to {0} (copied "
             "into the ring slot and out), loan / publish / take above (zero copy); ferry-copy "
             "is publish(const T&) at every size (above {0} copied once into a pool chunk), "
             "ferry-loan the loan path at every size; ferry-waitset and ferry-fd (latency only) "
             "are "
             "ferry-copy waiting in WaitSet::wait() or in poll() on WaitSet::fd() with --wait "
             "sleep; iceoryx is iceoryx 2.x loan / publish "
             "through a RouDi of its own ({1})",
             inline_max,
             bench::iceoryx_built() ? "built in"
                                    : "not built in: install libiceoryx-posh-dev and rebuild"))
      ->delimiter(',');
  cmd.add_option("--cpus", a.cpus,
                 "CPUs to pin to: the sending side first, then the receiving side(s) "
                 "(default: two different CPUs of the ones we may use)")
      ->delimiter(',');
  cmd.add_option("--wait", a.wait,
                 "spin (busy-poll) or sleep (every side blocks: take(timeout), futex, read)")
      ->capture_default_str();
  cmd.add_option("--repeat", a.repeat,
                 "Interleaved repetitions (A B C A B C ...); medians are reported")
      ->capture_default_str();
  cmd.add_flag("--json", a.json, "One JSON object per line, one line per size");
}

template <class Options>
void fill_common(Options& o, const CommonArgs& a) {
  o.sizes = bench::parse_sizes(a.sizes);
  o.transports = bench::parse_transports(a.transports);
  o.cpus = bench::parse_cpus(a.cpus);
  o.wait = bench::parse_wait(a.wait);
  o.repeat = a.repeat;
  o.json = a.json;
}

// Runs a verb: usage errors exit 2, a run that could not start 1, failed
// runs 1 (after the results), an interrupt 130.
template <class Run>
void run_verb(const Context& context, Run&& run) {
  // A benchmark measures in a domain of its own; silently ignoring --domain
  // would let a user believe the numbers came from theirs.
  if (context.domain_given) {
    throw Failure(
        kExitUsage,
        "ferry bench starts its own ferryd in a private domain, so --domain does not apply; "
        "run it without --domain");
  }
  int code = 0;
  try {
    code = run();
  } catch (const bench::UsageError& e) {
    throw Failure(kExitUsage, e.what());
  } catch (const std::exception& e) {
    throw Failure(kExitRuntime, e.what());
  }
  if (code == bench::kExitInterrupted) {
    throw Failure(
        code, "interrupted; every process and shared-memory object of the benchmark was removed");
  }
  if (code != 0) throw Failure(code, "some runs failed (see above); their results are left out");
}

// ferry bench scale: N node processes x M topics (bench::run_scale).
void add_scale_verb(CLI::App& bench, Context& context) {
  auto o = std::make_shared<bench::ScaleOptions>();
  auto* cmd = bench.add_subcommand(
      "scale",
      "N nodes x M topics: time to match every pair, ferryd's idle CPU and RSS, nodes' RSS, shared "
      "memory per queue, 64 B latency while all publish");
  cmd->add_option("--nodes", o->nodes, "Node processes")->capture_default_str();
  cmd->add_option("--topics", o->topics,
                  "Topics each node publishes (and subscribes to, the next node's)")
      ->capture_default_str();
  cmd->add_option("--idle-seconds", o->idle_seconds,
                  "ferryd's idle CPU is measured over this long, after matching")
      ->capture_default_str();
  cmd->add_option("--traffic-seconds", o->traffic_seconds,
                  "Then every node publishes for this long; latency is sampled")
      ->capture_default_str();
  cmd->add_option("--rate", o->rate_hz, "Samples each node publishes per second, round its topics")
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Whole runs, each with its own ferryd; medians reported")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON object");
  add_domain_option(*cmd, context, "")->group("");
  cmd->callback([&context, o] { run_verb(context, [&] { return bench::run_scale(*o, stdout); }); });
}

// ferry bench fanout: 1 publisher to K sleeping subscribers (bench::run_fanout).
void add_fanout_verb(CLI::App& bench, Context& context) {
  auto o = std::make_shared<bench::FanoutOptions>();
  auto counts = std::make_shared<std::vector<std::string>>();
  auto transports = std::make_shared<std::vector<std::string>>();
  auto* cmd = bench.add_subcommand(
      "fanout",
      "1 publisher to K sleeping subscribers: publish cost and the first and last wake-up, next "
      "to a Unix socket sending K copies and iceoryx");
  cmd->add_option("--subscribers", *counts, "Subscriber counts K (a list; default 1,2,4,8,16)")
      ->delimiter(',');
  cmd->add_option(
         "--transports", *transports,
         "ferry (inline 64 B), ferry-loan (loaned 64 B), unix-socket, iceoryx (default all "
         "that are built)")
      ->delimiter(',');
  cmd->add_option("--samples", o->samples, "Measured samples per run")->capture_default_str();
  cmd->add_option("--gap-us", o->gap_us,
                  "Pause after every subscriber took a sample, so all are asleep again")
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Interleaved repetitions; medians reported")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON object per line, one line per K");
  add_domain_option(*cmd, context, "")->group("");
  cmd->callback([&context, o, counts, transports] {
    run_verb(context, [&] {
      o->subscribers = bench::parse_counts(*counts);
      o->transports = bench::parse_transports(*transports);
      return bench::run_fanout(*o, stdout);
    });
  });
}

}  // namespace

void add_bench_commands(CLI::App& app, Context& context) {
  auto* bench = app.add_subcommand(
      "bench",
      "Measure ferry against the transport ring alone, a Unix socket and a pipe, on this machine");
  bench->require_subcommand(1);
  bench->footer(
      "Each verb starts its own ferryd (the one next to this program) in a private domain and "
      "runtime\n"
      "directory, forks the sides it measures (pinned to CPUs), and removes everything when it "
      "ends;\n"
      "so it refuses --domain (exit 2) and ignores FERRY_DOMAIN.\n"
      "Examples:\n"
      "  ferry bench latency\n"
      "  ferry bench latency --size 64 --size 3110400 --wait sleep --json\n"
      "  ferry bench throughput --size 64 --seconds 2 --subscribers 2");

  // Known (hidden from help) at every level so that run_verb refuses it with
  // the reason, instead of CLI11 calling it an unknown option.
  add_domain_option(*bench, context, "")->group("");

  auto lat = std::make_shared<CommonArgs>();
  auto rounds = std::make_shared<std::uint64_t>(0);
  auto max_run = std::make_shared<double>(1.0);
  auto* latency = bench->add_subcommand(
      "latency",
      "One-way latency (ping-pong round trip / 2): p50, p90, p99, p99.9, max, and ratios to ferry");
  add_common(*latency, *lat,
             "Message sizes: 64, 4KiB, 3110400 ... (repeat the flag or give a list; default "
             "64,4KiB,64KiB,1MiB,3110400)");
  latency->add_option(
      "--rounds", *rounds,
      "Measured round trips per run (default 20000 up to 16 KiB, fewer above, at least 300)");
  latency
      ->add_option("--max-run-seconds", *max_run,
                   "A run stops measuring after this long (fewer samples)")
      ->capture_default_str();
  add_domain_option(*latency, context, "")->group("");
  latency->callback([&context, lat, rounds, max_run] {
    run_verb(context, [&] {
      bench::LatencyOptions o;
      fill_common(o, *lat);
      o.rounds = *rounds;
      o.max_run_seconds = *max_run;
      return bench::run_latency(std::move(o), stdout);
    });
  });

  auto tput = std::make_shared<CommonArgs>();
  auto seconds = std::make_shared<double>(1.0);
  auto subscribers = std::make_shared<std::uint32_t>(1);
  auto batch = std::make_shared<std::uint32_t>(1);
  auto* throughput = bench->add_subcommand(
      "throughput",
      "Messages and bytes per second received, every sequence number checked, K subscribers");
  add_common(*throughput, *tput, "Message sizes (default 64)");
  throughput->add_option("--seconds", *seconds, "Measured seconds per run")->capture_default_str();
  throughput->add_option("--subscribers", *subscribers, "Receivers (fan-out), each its own process")
      ->capture_default_str();
  throughput
      ->add_option("--batch", *batch,
                   "Messages per publish_many / take_many (ferry up to 4 KiB, raw-ring); 1: singly")
      ->capture_default_str();
  add_domain_option(*throughput, context, "")->group("");
  add_scale_verb(*bench, context);
  add_fanout_verb(*bench, context);
  throughput->callback([&context, tput, seconds, subscribers, batch] {
    run_verb(context, [&] {
      bench::ThroughputOptions o;
      fill_common(o, *tput);
      o.seconds = *seconds;
      o.subscribers = *subscribers;
      o.batch = *batch;
      return bench::run_throughput(std::move(o), stdout);
    });
  });
}

}  // namespace ferry::cli
