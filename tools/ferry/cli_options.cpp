// ferry's command line: every verb's flags, help texts and footers, parsed by
// CLI11 into the plain option structs of verb_options.hpp, and the verb run
// from them. The only file that includes CLI11: the library costs about 15 s
// of compile time in each file that includes it.
#include "cli_options.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli_context.hpp"
#include "commands.hpp"
#include "usage.hpp"
#include "verb_options.hpp"

namespace ferry::cli {

namespace {

constexpr const char* kDomainHelp = "Domain to work on (else FERRY_DOMAIN, else 'default')";

// The flags of every verb, alive while CLI11 parses into them and runs the
// verb's callback.
struct Verbs {
  TopicListOptions topic_list;
  TopicInfoOptions topic_info;
  EchoOptions echo;
  PubOptions pub;
  RateOptions hz;
  RateOptions bw;
  DelayOptions delay;
  NodeListOptions node_list;
  ServiceListOptions service_list;
  ServiceInfoOptions service_info;
  ServiceCallOptions service_call;
  PoolOptions pool;
  TopOptions top;
  ConfigCheckOptions config_check;
  BenchLatencyOptions bench_latency;
  BenchRpcOptions bench_rpc;
  BenchThroughputOptions bench_throughput;
  BenchScaleOptions bench_scale;
  BenchFanoutOptions bench_fanout;
  CleanOptions clean;
  BagInfoOptions bag_info;
  GenCppOptions gen_cpp;
  GenCOptions gen_c;
  GenMsgOptions gen_msg;
  GenYamlOptions gen_yaml;
  BridgeCliOptions bridge;
  FoxgloveCliOptions foxglove;
  RecordOptions record;
  PlayOptions play;
};

// Where a verb's callback leaves its exit code, and the domain flags.
struct Run {
  Context context;
  int code = kExitOk;
};

// Checks for numeric options: "--rate: must be above 0, got 0" (CLI11's
// PositiveNumber prints its range up to 1.8e308 in full).
CLI::Validator above_zero() {
  return CLI::Validator([](std::string& text) { return check_number(text, false); }, "POSITIVE");
}

CLI::Validator zero_or_more() {
  return CLI::Validator([](std::string& text) { return check_number(text, true); }, "NONNEGATIVE");
}

CLI::Validator a_count() {
  return CLI::Validator([](std::string& text) { return check_count(text); }, "COUNT");
}

CLI::Validator a_count_above_zero() {
  return CLI::Validator([](std::string& text) { return check_count(text, false); }, "COUNT");
}

// Adds `--domain NAME` to `app`, storing into the context.
CLI::Option* add_domain_option(CLI::App& app, Context& context, const std::string& help) {
  return app
      .add_option_function<std::string>(
          "--domain",
          [&context](const std::string& name) {
            const std::string problem = context.set_domain_flag(name);
            if (!problem.empty()) throw CLI::ValidationError("--domain", problem);
          },
          help)
      ->type_name("NAME");
}

// Gives `app` and every subcommand below it --domain and --version, so that
// they work before the verb, after it and between its words. A subcommand
// that registered its own --domain (bench: refused; config check: unused)
// keeps it.
void add_global_flags(CLI::App& app, Context& context) {
  if (app.get_option_no_throw("--domain") == nullptr) add_domain_option(app, context, kDomainHelp);
  if (app.get_option_no_throw("--version") == nullptr) app.set_version_flag("--version", kVersion);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    add_global_flags(*sub, context);
}

void add_topic_list(CLI::App& topic, TopicListOptions& o, Run& run) {
  auto* list = topic.add_subcommand(
      "list", "List topics: type, policy, capacity, publisher and subscriber counts, current rate");
  list->add_flag("--json", o.json, "Print a JSON array");
  list->footer("Examples:\n  ferry topic list\n  ferry --domain demo topic list --json");
  list->callback([&o, &run] { run.code = run_topic_list(o, run.context); });
}

void add_topic_info(CLI::App& topic, TopicInfoOptions& o, Run& run) {
  auto* info = topic.add_subcommand(
      "info", "A topic's configuration, publishers, subscribers and per-queue counters");
  info->add_option("TOPIC", o.topic, "The topic")->required();
  info->add_flag("--json", o.json, "Print a JSON object");
  info->footer(
      "Counters are read from the queues in shared memory, per (publisher, subscriber) queue:\n"
      "  published = delivered + dropped + timed_out; taken by the subscriber; backlog waiting "
      "now.\n"
      "Observers (tools such as topic echo, hz, bw) are listed apart; their queues overwrite the\n"
      "oldest sample whatever the policy, so their overwritten count is what the tool missed.\n"
      "Examples:\n  ferry topic info robot/pose\n  ferry topic info robot/pose --json");
  info->callback([&o, &run] { run.code = run_topic_info(o, run.context); });
}

void add_echo(CLI::App& topic, EchoOptions& o, Run& run) {
  auto* cmd =
      topic.add_subcommand("echo", "Print the samples published on a topic, decoded with its type");
  cmd->add_option("TOPIC", o.topic, "The topic")->required();
  cmd->add_option("--count,-n", o.count, "Stop after N samples (default: until Ctrl-C)")
      ->check(a_count());
  cmd->add_flag("--json", o.json, "One JSON object per line, keyed by field name");
  cmd->add_flag("--full", o.full,
                "Print arrays and sequences longer than 256 elements in full (else their count "
                "and first elements, or a u8 one's size and a hex prefix)");
  cmd->footer(
      "Samples are decoded with the YAML types ferryd loaded: nested types, arrays, char[N] and\n"
      "string<=N as strings, T[<=N] as a list of the elements used; opaque types and bytes\n"
      "topics as their size and a hex prefix. After the fields,\n"
      "_info: the sample's sequence (per publisher; a gap is samples this echo missed),\n"
      "publisher_id, publish_time_ns (CLOCK_REALTIME) and age_ms (publish to take).\n"
      "Examples:\n  ferry topic echo robot/pose\n  ferry topic echo robot/pose --count 1 --json");
  cmd->callback([&o, &run] { run.code = run_echo(o, run.context); });
}

void add_pub(CLI::App& topic, PubOptions& o, Run& run) {
  auto* cmd = topic.add_subcommand("pub", "Publish samples given as a YAML/JSON flow map");
  cmd->add_option("TOPIC", o.topic, "The topic")->required();
  cmd->add_option("VALUE", o.value,
                  "The sample: a flow map of field names, e.g. '{x: 1.5, frame: map}'; missing "
                  "fields are zero")
      ->required();
  cmd->add_option("--count,-n", o.count, "Samples to publish (0: until Ctrl-C)")
      ->check(a_count())
      ->capture_default_str();
  cmd->add_option("--rate,-r", o.rate, "Samples per second")
      ->check(above_zero())
      ->capture_default_str();
  cmd->add_option("--wait-subscribers", o.wait_subscribers,
                  "Subscribers to wait for (up to 2 s) before the first sample; 0: none "
                  "(default: every subscriber and observer ferryd reports when the publisher "
                  "is created, at least one)")
      ->check(a_count());
  cmd->footer(
      "The value is checked against the topic's type first: an unknown field, a wrong type or a\n"
      "number out of range is an error (exit 2) naming the field. Before the first sample it\n"
      "waits up to 2 s for the topic's subscribers, so that each gets every sample.\n"
      "Examples:\n"
      "  ferry topic pub robot/pose '{stamp_ns: 1, x: 1.5, y: -2, frame: map}'\n"
      "  ferry topic pub robot/pose '{\"x\": 1.5}' --count 100 --rate 50\n"
      "  ferry topic pub robot/pose '{}' --count 0        # zeros at 10 Hz until Ctrl-C");
  cmd->callback([&o, &run] { run.code = run_pub(o, run.context); });
}

// topic hz and topic bw: the same flags, a window of its own by default.
void add_measure(CLI::App& topic, Measure m, RateOptions& o, Run& run) {
  const bool rate = m == Measure::Rate;
  o.window = rate ? 10000 : 100;
  auto* cmd =
      topic.add_subcommand(rate ? "hz" : "bw", rate ? "Print a topic's publishing rate every second"
                                                    : "Print a topic's bandwidth every second");
  cmd->add_option("TOPIC", o.topic, "The topic")->required();
  cmd->add_option("--window,-w", o.window, "Compute over the last N samples")
      ->check(CLI::Range(std::size_t{2}, std::size_t{10'000'000}))
      ->capture_default_str();
  cmd->add_option("--duration", o.duration, "Stop after this many seconds (default: until Ctrl-C)")
      ->check(zero_or_more());
  cmd->add_flag("--json", o.json, "One JSON object per report");
  cmd->footer(
      rate
          ? "Rate is 1 / the mean interval between arrivals; min, max and std dev are of the "
            "intervals.\n"
            "Examples:\n  ferry topic hz robot/pose\n  ferry topic hz robot/pose --window 50 "
            "--duration 5 --json"
          : "Bandwidth is the bytes of the samples that arrived in the window over its time span.\n"
            "Examples:\n  ferry topic bw camera/frames\n  ferry topic bw robot/pose --duration 3 "
            "--json");
  cmd->callback([m, &o, &run] { run.code = run_rate(m, o, run.context); });
}

void add_delay(CLI::App& topic, DelayOptions& o, Run& run) {
  auto* cmd = topic.add_subcommand(
      "delay", "Print the publish-to-take delay of a topic's samples every second");
  cmd->add_option("TOPIC", o.topic, "The topic")->required();
  cmd->add_option("--window,-w", o.window_s, "Compute over the samples taken in the last S seconds")
      ->check(above_zero())
      ->capture_default_str();
  cmd->add_option("--duration", o.duration, "Stop after this many seconds (default: until Ctrl-C)")
      ->check(zero_or_more());
  cmd->add_flag("--json", o.json, "One JSON object per report");
  cmd->footer(
      "The delay of a sample is the time it was taken minus the time it was published (its\n"
      "publish_time_ns, CLOCK_REALTIME): queueing plus the wake-up of this subscriber.\n"
      "Examples:\n  ferry topic delay robot/pose\n  ferry topic delay robot/pose --window 5 "
      "--duration 10 --json");
  cmd->callback([&o, &run] { run.code = run_delay(o, run.context); });
}

void add_topic_commands(CLI::App& app, Verbs& v, Run& run) {
  auto* topic = app.add_subcommand("topic", "Inspect and drive the topics of a running domain");
  topic->require_subcommand(1);
  add_topic_list(*topic, v.topic_list, run);
  add_topic_info(*topic, v.topic_info, run);
  add_echo(*topic, v.echo, run);
  add_pub(*topic, v.pub, run);
  add_measure(*topic, Measure::Rate, v.hz, run);
  add_measure(*topic, Measure::Bandwidth, v.bw, run);
  add_delay(*topic, v.delay, run);
}

void add_node_commands(CLI::App& app, NodeListOptions& o, Run& run) {
  auto* node = app.add_subcommand("node", "Inspect the nodes of a running domain");
  node->require_subcommand(1);
  auto* list = node->add_subcommand("list", "List nodes: pid, heartbeat age, uptime, ports");
  list->add_flag("--json", o.json, "Print a JSON array");
  list->footer(
      "HEARTBEAT is the age of the node's last heartbeat as ferryd saw it; UP is the time\n"
      "since it joined. The asking ferry itself is not listed.\n"
      "Examples:\n  ferry node list\n  ferry --domain demo node list --json");
  list->callback([&o, &run] { run.code = run_node_list(o, run.context); });
}

void add_service_commands(CLI::App& app, Verbs& v, Run& run) {
  auto* service =
      app.add_subcommand("service", "Inspect and call the services of a running domain");
  service->require_subcommand(1);
  auto* list = service->add_subcommand(
      "list", "List services: request and response types, capacity, server, clients");
  list->add_flag("--json", v.service_list.json, "Print a JSON array");
  list->footer("Examples:\n  ferry service list\n  ferry --domain demo service list --json");
  list->callback([&o = v.service_list, &run] { run.code = run_service_list(o, run.context); });

  auto* info = service->add_subcommand(
      "info", "A service's types (with their fields), capacity, server and clients");
  info->add_option("NAME", v.service_info.service, "The service")->required();
  info->add_flag("--json", v.service_info.json, "Print a JSON object");
  info->footer("Examples:\n  ferry service info planner/plan");
  info->callback([&o = v.service_info, &run] { run.code = run_service_info(o, run.context); });

  auto* call = service->add_subcommand(
      "call", "Call a service with a request given as a YAML/JSON flow map; print the response");
  call->add_option("NAME", v.service_call.service, "The service")->required();
  call->add_option("REQUEST", v.service_call.value,
                   "The request as a flow map, e.g. '{x: 1.5}' (missing fields are zero)")
      ->required();
  call->add_option("--timeout", v.service_call.timeout_ms,
                   "Milliseconds to wait for a server and for the response (default 1000)")
      ->check(a_count_above_zero());
  call->add_flag("--json", v.service_call.json, "Print the response as one JSON object");
  call->footer(
      "The request is checked against the service's request type first: an unknown field, a\n"
      "wrong type or a value out of range is exit 2, naming the field. The response is printed\n"
      "field by field (one JSON object with --json). No server, a timeout or a server that\n"
      "left is exit 1.\n"
      "Examples:\n  ferry service call planner/plan '{goal_x: 3, goal_y: 4}'\n"
      "  ferry service call calc/add '{a: 1, b: 2}' --timeout 200 --json");
  call->callback([&o = v.service_call, &run] { run.code = run_service_call(o, run.context); });
}

void add_pool_command(CLI::App& app, PoolOptions& o, Run& run) {
  auto* cmd = app.add_subcommand(
      "pool", "Show the loaned-memory pool: size classes, free chunks, the topics holding them");
  cmd->add_flag("--json", o.json, "Print a JSON object");
  cmd->footer(
      "Per size class: total chunks, free, loaned (held by the publisher that allocated them),\n"
      "in flight (queued to or held by subscribers) and the low-water mark of free chunks;\n"
      "then the topics holding the most chunks: queued in their queues, or held by a node\n"
      "(a loan, history, samples taken and kept). Held chunks that cannot be told apart\n"
      "show as \"(node X, topics a, b)\".\n"
      "Examples:\n  ferry pool\n  ferry --domain demo pool --json");
  cmd->callback([&o, &run] { run.code = run_pool(o, run.context); });
}

void add_top_command(CLI::App& app, TopOptions& o, Run& run) {
  auto* cmd =
      app.add_subcommand("top", "Live table of every topic: rate, bandwidth, backlog, drops");
  cmd->add_option("--count,-n", o.count, "Stop after N refreshes (default: until q or Ctrl-C)")
      ->check(a_count());
  cmd->footer(
      "Columns: P/S publishers/subscribers; RATE/s samples published per second; BW/s bytes per\n"
      "second (rate x sample size); BACKLOG samples waiting in the queues; DROPPED (drop_new),\n"
      "OVERWR (drop_oldest) and TIMEOUT (block) since the queues were created. Refreshes every\n"
      "second; q quits. When stdout is not a terminal it prints one table per second.\n"
      "Examples:\n  ferry top\n  ferry top --count 3 > snapshot.txt");
  cmd->callback([&o, &run] { run.code = run_top(o, run.context); });
}

void add_config_commands(CLI::App& app, ConfigCheckOptions& o, Run& run) {
  auto* config = app.add_subcommand("config", "Work with topic configuration files");
  config->require_subcommand(1);
  auto* check_cmd = config->add_subcommand(
      "check", "Validate a YAML configuration; print each problem with file:line:col");
  check_cmd->add_option("FILE", o.file, "The YAML file")->required();
  // Taken like everywhere (scripts pass it to every verb), but it changes
  // nothing here, and help says so.
  add_domain_option(*check_cmd, run.context,
                    "Accepted for uniformity, not used: the check reads FILE only");
  check_cmd->footer("Example:\n  ferry config check examples/hello/hello.yaml");
  check_cmd->callback([&o, &run] { run.code = run_config_check(o, run.context); });
}

// The flags both bench verbs share.
void add_bench_common(CLI::App& cmd, BenchCommonOptions& a, const char* size_help) {
  cmd.add_option("--size", a.sizes, size_help)->delimiter(',');
  cmd.add_option("--transports", a.transports, bench_transports_help())->delimiter(',');
  cmd.add_option("--cpus", a.cpus,
                 "CPUs to pin to, each side its own: the sending side first, then the "
                 "receiving side(s) (default: not pinned; the spread of the repeats is "
                 "reported)")
      ->delimiter(',');
  cmd.add_option("--wait", a.wait,
                 "spin (busy-poll) or sleep (every side blocks: take(timeout), futex, read)")
      ->capture_default_str();
  cmd.add_option("--repeat", a.repeat,
                 "Interleaved repetitions (A B C A B C ...); medians are reported, with "
                 "their range")
      ->capture_default_str();
  cmd.add_flag("--json", a.json, "One JSON object per line, one line per size");
}

void add_bench_commands(CLI::App& app, Verbs& v, Run& run) {
  auto* bench = app.add_subcommand(
      "bench",
      "Measure ferry against the transport ring alone, a Unix socket, a pipe, iceoryx, Fast DDS, "
      "Cyclone DDS and the cache-line floor, on this machine");
  bench->require_subcommand(1);
  bench->footer(
      "Each verb starts its own ferryd (the one next to this program) in a private domain and "
      "runtime\n"
      "directory, forks the sides it measures (pinned to CPUs with --cpus), and removes everything "
      "when it "
      "ends;\n"
      "so it refuses --domain (exit 2) and ignores FERRY_DOMAIN.\n"
      "Examples:\n"
      "  ferry bench latency\n"
      "  ferry bench latency --size 64 --size 3110400 --wait sleep --json\n"
      "  ferry bench throughput --size 64 --seconds 2 --subscribers 2");

  // Known (hidden from help) at every level so that the verb refuses it with
  // the reason, instead of CLI11 calling it an unknown option.
  add_domain_option(*bench, run.context, "")->group("");

  BenchLatencyOptions& lat = v.bench_latency;
  auto* latency = bench->add_subcommand(
      "latency",
      "One-way latency (ping-pong round trip / 2): p50, p90, p99, p99.9, max, and ratios to ferry");
  add_bench_common(*latency, lat.common,
                   "Message sizes: 64, 4KiB, 3110400 ... (repeat the flag or give a list; default "
                   "64,4KiB,64KiB,1MiB,3110400)");
  latency
      ->add_option(
          "--rounds", lat.rounds,
          "Measured round trips per run (default 20000 up to 16 KiB, fewer above, at least 300)")
      ->check(a_count());
  latency
      ->add_option("--max-run-seconds", lat.max_run_seconds,
                   "A run stops measuring after this long (fewer samples)")
      ->capture_default_str();
  add_domain_option(*latency, run.context, "")->group("");
  latency->callback([&lat, &run] { run.code = run_bench_latency(lat, run.context); });

  BenchRpcOptions& rpc = v.bench_rpc;
  auto* rpc_cmd = bench->add_subcommand(
      "rpc",
      "Round trip of a service call (docs/services.md) against a Unix-socket request/reply and "
      "iceoryx 2.0's Client/Server (when built in): p50, p90, p99, p99.9, max");
  rpc_cmd->add_option("--rounds", rpc.rounds, "Measured calls per run")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  rpc_cmd->add_option("--repeat", rpc.repeat, "Runs per transport; the median is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  rpc_cmd->add_option("--cpus", rpc.cpus, "Pin the client and the server to these two CPUs")
      ->delimiter(',');
  rpc_cmd->add_flag("--json", rpc.json, "Print a JSON object");
  rpc_cmd->footer("Examples:\n  ferry bench rpc\n  ferry bench rpc --cpus 0,1 --json");
  add_domain_option(*rpc_cmd, run.context, "")->group("");
  rpc_cmd->callback([&rpc, &run] { run.code = run_bench_rpc(rpc, run.context); });

  BenchThroughputOptions& tput = v.bench_throughput;
  auto* throughput = bench->add_subcommand(
      "throughput",
      "Messages and bytes per second received, every sequence number checked, K subscribers");
  add_bench_common(*throughput, tput.common, "Message sizes (default 64)");
  throughput->add_option("--seconds", tput.seconds, "Measured seconds per run")
      ->capture_default_str();
  throughput
      ->add_option("--subscribers", tput.subscribers, "Receivers (fan-out), each its own process")
      ->capture_default_str();
  throughput
      ->add_option("--batch", tput.batch,
                   "Messages per publish_many / take_many (ferry up to 4 KiB, ferry-loan: "
                   "loan_many, raw-ring); 1: singly")
      ->capture_default_str();
  add_domain_option(*throughput, run.context, "")->group("");
  throughput->callback([&tput, &run] { run.code = run_bench_throughput(tput, run.context); });

  BenchScaleOptions& scale = v.bench_scale;
  auto* scale_cmd = bench->add_subcommand(
      "scale",
      "N nodes x M topics: time to match every pair, ferryd's idle CPU and RSS, nodes' RSS, shared "
      "memory per queue, 64 B latency while all publish");
  scale_cmd->add_option("--nodes", scale.nodes, "Node processes")->capture_default_str();
  scale_cmd
      ->add_option("--topics", scale.topics,
                   "Topics each node publishes (and subscribes to, the next node's)")
      ->capture_default_str();
  scale_cmd
      ->add_option("--idle-seconds", scale.idle_seconds,
                   "ferryd's idle CPU is measured over this long, after matching")
      ->capture_default_str();
  scale_cmd
      ->add_option("--traffic-seconds", scale.traffic_seconds,
                   "Then every node publishes for this long; latency is sampled")
      ->capture_default_str();
  scale_cmd
      ->add_option("--rate", scale.rate_hz,
                   "Samples each node publishes per second, round its topics")
      ->capture_default_str();
  scale_cmd
      ->add_option("--repeat", scale.repeat,
                   "Whole runs, each with its own ferryd; medians reported")
      ->capture_default_str();
  scale_cmd->add_flag("--json", scale.json, "One JSON object");
  add_domain_option(*scale_cmd, run.context, "")->group("");
  scale_cmd->callback([&scale, &run] { run.code = run_bench_scale(scale, run.context); });

  BenchFanoutOptions& fanout = v.bench_fanout;
  auto* fanout_cmd = bench->add_subcommand(
      "fanout",
      "1 publisher to K sleeping subscribers: publish cost and the first and last wake-up, next "
      "to a Unix socket sending K copies and iceoryx");
  fanout_cmd
      ->add_option("--subscribers", fanout.subscribers,
                   "Subscriber counts K (a list; default 1,2,4,8,16)")
      ->delimiter(',');
  fanout_cmd
      ->add_option("--transports", fanout.transports,
                   "ferry (inline 64 B), ferry-loan (loaned 64 B), unix-socket, iceoryx (default "
                   "all that are built)")
      ->delimiter(',');
  fanout_cmd->add_option("--samples", fanout.samples, "Measured samples per run")
      ->capture_default_str();
  fanout_cmd
      ->add_option("--gap-us", fanout.gap_us,
                   "Pause after every subscriber took a sample, so all are asleep again")
      ->capture_default_str();
  fanout_cmd->add_option("--repeat", fanout.repeat, "Interleaved repetitions; medians reported")
      ->capture_default_str();
  fanout_cmd->add_flag("--json", fanout.json, "One JSON object per line, one line per K");
  add_domain_option(*fanout_cmd, run.context, "")->group("");
  fanout_cmd->callback([&fanout, &run] { run.code = run_bench_fanout(fanout, run.context); });
}

void add_clean_command(CLI::App& app, CleanOptions& o, Run& run) {
  auto* cmd = app.add_subcommand(
      "clean", "Remove a dead domain's shared-memory objects, stale socket and pid file");
  cmd->add_flag("--json", o.json,
                "Print a JSON object: domain, objects, socket, pid_file, dead_pid, failures");
  cmd->footer(
      "Removes /dev/shm/ferry.<domain>.* and the socket and pid file a killed ferryd left in the\n"
      "runtime directory. Refuses (exit 1) while a ferryd serves the domain: stop it instead, it\n"
      "removes its own objects. Processes that still map an object keep their mapping; a new\n"
      "ferryd removes the same leftovers when it starts.\n"
      "Examples:\n  ferry clean\n  ferry --domain demo clean --json");
  cmd->callback([&o, &run] { run.code = run_clean(o, run.context); });
}

void add_bag_commands(CLI::App& app, BagInfoOptions& o, Run& run) {
  auto* bag = app.add_subcommand("bag", "Inspect MCAP recordings (ferry record writes them)");
  bag->require_subcommand(1);
  auto* info = bag->add_subcommand(
      "info", "Show a recording's topics, types, message counts, start, end, duration and size");
  info->add_option("FILE", o.file, "The .mcap file")->required();
  info->add_flag("--json", o.json, "Print a JSON object");
  info->footer(
      "A file whose recorder was killed has no summary: its complete chunks are counted,\n"
      "the offset where it was cut is named, and the exit code is 1.\n"
      "Examples:\n  ferry bag info run.mcap\n  ferry bag info run.mcap --json");
  info->callback([&o, &run] { run.code = run_bag_info(o, run.context); });
}

void add_gen_commands(CLI::App& app, Verbs& v, Run& run) {
  auto* gen = app.add_subcommand("gen", "Generate code from a YAML configuration's types");
  gen->require_subcommand(1);

  GenCppOptions& c = v.gen_cpp;
  auto* cpp = gen->add_subcommand(
      "cpp", "Write the YAML's types as C++ structs with FERRY_TYPE_NAMED and layout checks");
  cpp->add_option("FILE", c.file, "The YAML file")->required();
  cpp->add_option("-o,--output", c.output, "The header to write (default: standard output)");
  add_domain_option(*cpp, run.context, "Accepted for uniformity, not used: gen reads FILE only");
  cpp->footer("Example:\n  ferry gen cpp examples/hello/hello.yaml -o hello_types.hpp");
  cpp->callback([&c, &run] { run.code = run_gen_cpp(c, run.context); });

  GenCOptions& cc = v.gen_c;
  auto* c11 = gen->add_subcommand(
      "c", "Write the YAML's types as C11 typedef structs with layout checks (the C API)");
  c11->add_option("FILE", cc.file, "The YAML file")->required();
  c11->add_option("-o,--output", cc.output, "The header to write (default: standard output)");
  add_domain_option(*c11, run.context, "Accepted for uniformity, not used: gen reads FILE only");
  c11->footer("Example:\n  ferry gen c examples/hello/hello.yaml -o hello_types.h");
  c11->callback([&cc, &run] { run.code = run_gen_c(cc, run.context); });

  GenMsgOptions& m = v.gen_msg;
  auto* msg = gen->add_subcommand("msg", "Print the ROS 2 .msg definition of the YAML's types");
  msg->add_option("FILE", m.file, "The YAML file")->required();
  msg->add_option("TYPE", m.type, "Only this type (default: every type, each under a comment)");
  add_domain_option(*msg, run.context, "Accepted for uniformity, not used: gen reads FILE only");
  msg->footer("Example:\n  ferry gen msg examples/hello/hello.yaml Pose > Pose.msg");
  msg->callback([&m, &run] { run.code = run_gen_msg(m, run.context); });

  GenYamlOptions& y = v.gen_yaml;
  auto* yaml = gen->add_subcommand("yaml", "Turn ROS 2 .msg definitions into ferry YAML types");
  yaml->add_option("FILE", y.files, "The .msg files (PKG/msg/NAME.msg: the type is PKG/msg/NAME)")
      ->required();
  yaml->add_option("--max-string", y.max_string,
                   "The bound N of string<=N for a `string` field (default 256)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{UINT32_MAX}));
  yaml->add_option("--max-sequence", y.max_sequence,
                   "The bound N of T[<=N] for a `T[]` field (default 1024)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{UINT32_MAX}));
  yaml->add_option("-o,--output", y.output, "Write to this file (default: standard output)");
  add_domain_option(*yaml, run.context, "Accepted for uniformity, not used: gen reads FILE only");
  yaml->footer(
      "string<=N and T[<=N] of the .msg keep their bounds, T[N] stays fixed; constants are left\n"
      "out; standard types (std_msgs, geometry_msgs, sensor_msgs, builtin_interfaces) come from\n"
      "ferry's shipped definitions through `include:`.\n"
      "Example:\n  ferry gen yaml my_pkg/msg/Detection.msg --max-string 64 > detection.yaml");
  yaml->callback([&y, &run] { run.code = run_gen_yaml(y, run.context); });
}

void add_bridge_command(CLI::App& app, BridgeCliOptions& o, Run& run) {
  auto* cmd =
      app.add_subcommand("bridge", "Bridge topics to and from DDS (Eclipse Cyclone DDS, ROS 2)");
  cmd->add_option("--dds-domain", o.dds_domain, "The DDS domain id (default 0)");
  cmd->add_option("--export", o.exports, "Local topics written to DDS as rt/TOPIC")
      ->expected(1, -1);
  cmd->add_option("--import", o.imports, "DDS topics rt/TOPIC published locally")->expected(1, -1);
  cmd->add_option("--stats", o.stats_seconds, "Seconds between the printed counts")
      ->check(above_zero())
      ->capture_default_str();
  cmd->add_option("--export-spin-us", o.export_spin_us,
                  "Microseconds an exporter polls its empty queue (yielding the CPU) before it "
                  "sleeps: lower latency for CPU time; 0 sleeps at once")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--export-service", o.export_services,
                  "Local services served to DDS as a ROS 2 service (rq/NAMERequest, rr/NAMEReply)")
      ->expected(1, -1);
  cmd->add_option("--import-service", o.import_services,
                  "ROS 2 services in DDS served locally (the bridge calls them as a ROS 2 client)")
      ->expected(1, -1);
  cmd->add_option("--service-timeout-ms", o.service_timeout_ms,
                  "How long a bridged service call may take before the bridge gives it up")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  cmd->footer(
      "Runs in the foreground until Ctrl-C, as a node named ferry-bridge. Each topic must be\n"
      "declared in the configuration ferryd serves; its DDS type is pkg::msg::dds_::Name_, wire\n"
      "form little-endian CDR, and the log shows the matching ROS 2 .msg definition.\n"
      "What this bridge imported is never exported again.\n"
      "Examples:\n"
      "  ferry bridge --export robot/pose --import robot/cmd\n"
      "  ferry bridge --dds-domain 7 --export camera/frames\n"
      "  ferry bridge --export-service planner/plan --import-service map/tile");
  cmd->callback([&o, &run] { run.code = run_bridge(o, run.context); });
}

void add_foxglove_command(CLI::App& app, FoxgloveCliOptions& o, Run& run) {
  auto* cmd = app.add_subcommand(
      "foxglove", "Serve the domain to Foxglove or Lichtblick (Foxglove WebSocket protocol)");
  cmd->add_option("--address", o.address, "The address to listen on")->capture_default_str();
  cmd->add_option("--port", o.port, "The TCP port (0: any free one, printed)")
      ->capture_default_str();
  cmd->add_option("--topics", o.topics, "Only topics matching these globs (e.g. 'camera/*')")
      ->expected(1, -1);
  cmd->add_option("--max-clients", o.max_clients, "Clients served at once; more are refused")
      ->capture_default_str();
  cmd->add_option("--send-buffer", o.send_buffer_mib,
                  "MiB of messages waiting for one client; past it its oldest are dropped")
      ->capture_default_str();
  cmd->footer(
      "Runs in the foreground until Ctrl-C, as a node named ferry-foxglove. Every topic is a\n"
      "channel (encoding cdr, its ROS 2 schema); topics that appear or go away are advertised\n"
      "and unadvertised. It subscribes as an observer, so a slow client never slows a\n"
      "publisher: a client that reads too slowly loses its oldest messages, the busiest channel's\n"
      "first, and is told so by a status message. Clients may publish into a topic whose schema\n"
      "name they advertise (clientPublish). In Foxglove or Lichtblick: Open connection >\n"
      "Foxglove WebSocket > ws://127.0.0.1:8765.\n"
      "Examples:\n"
      "  ferry foxglove\n"
      "  ferry foxglove --address 0.0.0.0 --topics 'robot/*' 'camera/*' --send-buffer 64");
  cmd->callback([&o, &run] { run.code = run_foxglove(o, run.context); });
}

void add_record_command(CLI::App& app, RecordOptions& o, Run& run) {
  auto* cmd =
      app.add_subcommand("record", "Record topics into an MCAP file (ros2msg schemas, CDR)");
  cmd->add_option("TOPIC", o.topics, "Topics to record");
  cmd->add_flag("--all,-a", o.all, "Record every topic, also those that appear while recording");
  cmd->add_option("--output,-o", o.output, "The .mcap file to write")->required();
  cmd->add_option("--duration,-d", o.duration, "Stop after S seconds (default: until Ctrl-C)")
      ->check(above_zero());
  cmd->add_option("--count,-n", o.count, "Stop after N messages in all")->check(a_count());
  cmd->add_option("--compression", o.compression, "Chunk compression: none, lz4 or zstd")
      ->capture_default_str();
  cmd->add_flag("--observe", o.observe,
                "Subscribe as an observer: never slows a publisher (not even on a block topic), "
                "reports what it missed");
  cmd->footer(
      "Ctrl-C (or SIGTERM) ends the recording with a complete file. A recorder killed with -9\n"
      "leaves its complete chunks readable (ferry bag info shows them). Samples the recorder\n"
      "missed (a drop_oldest or drop_new queue that overflowed) are reported at the end and\n"
      "kept in the file's \"ferry.record\" metadata. By default the recorder is a lossless\n"
      "subscriber (on a block topic a recorder that falls behind holds the publisher); with\n"
      "--observe it never slows anyone and reports what it missed instead.\n"
      "Examples:\n"
      "  ferry record robot/pose -o pose.mcap --duration 10\n"
      "  ferry record --all -o run.mcap --compression zstd");
  cmd->callback([&o, &run] { run.code = run_record(o, run.context); });
}

void add_play_command(CLI::App& app, PlayOptions& o, Run& run) {
  auto* cmd = app.add_subcommand("play", "Publish an MCAP recording again, with its spacing");
  cmd->add_option("FILE", o.file, "The .mcap file (written by ferry record)")->required();
  cmd->add_option("--rate,-r", o.rate, "Speed factor: 2 plays twice as fast")
      ->check(above_zero())
      ->capture_default_str();
  cmd->add_flag("--loop,-l", o.loop, "Play again from the start until Ctrl-C");
  cmd->add_option("--topics", o.topics, "Only these topics (comma-separated)")->delimiter(',');
  cmd->add_option("--start-offset,-s", o.start_offset, "Skip the first S seconds of the recording")
      ->check(zero_or_more());
  cmd->add_option("--max-gap", o.max_gap,
                  "Longest wait between two messages, in seconds of recording: a longer gap "
                  "(a clock jump, a bad timestamp) is cut to it and said on stderr; 0: no limit")
      ->check(zero_or_more())
      ->capture_default_str();
  cmd->footer(
      "Each channel's type must match the domain's topic (same ferry type, same fields), or\n"
      "nothing is played. Waits up to 2 s for each topic to have a subscriber.\n"
      "Examples:\n"
      "  ferry play run.mcap\n"
      "  ferry play run.mcap --rate 0.5 --topics camera/frames --start-offset 2\n"
      "  ferry play run.mcap --loop");
  cmd->callback([&o, &run] { run.code = run_play(o, run.context); });
}

// The levels CLI11 entered, root first, as usage_error reads them.
// get_subcommands() lists what was parsed, and stays filled when parse()
// throws.
std::vector<ParsedLevel> parsed_chain(const CLI::App& root) {
  std::vector<ParsedLevel> chain;
  const CLI::App* at = &root;
  while (true) {
    ParsedLevel level{at->get_name(), at->remaining(), {}};
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      level.commands.push_back(sub->get_name());
    chain.push_back(std::move(level));
    if (at->get_subcommands().empty()) return chain;
    at = at->get_subcommands().front();
  }
}

ParseErrorKind kind_of(const CLI::Error& error) {
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) return ParseErrorKind::Required;
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) return ParseErrorKind::Extras;
  return ParseErrorKind::Other;
}

}  // namespace

int run_command_line(int argc, char** argv) {
  Verbs verbs;
  Run run;
  // Named, so that help says "Usage: ferry topic list", not the path it ran from.
  CLI::App app{"ferry: inspect and drive a ferry domain (topics, nodes, pool)", "ferry"};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  ferry topic list\n"
      "  ferry topic echo robot/pose --count 1\n"
      "  ferry topic pub robot/pose '{x: 1.5, frame: map}'\n"
      "  ferry --domain demo node list --json\n"
      "  ferry top\n"
      "  ferry config check topics.yaml\n"
      "  ferry gen cpp topics.yaml -o topics.hpp\n"
      "  ferry gen c topics.yaml -o topics.h\n"
      "  ferry clean                      # after a ferryd was killed\n"
      "  ferry record --all -o run.mcap   # Ctrl-C to stop\n"
      "  ferry bag info run.mcap\n"
      "  ferry play run.mcap\n"
      "  ferry bridge --export robot/pose   # onto DDS / ROS 2\n"
      "  ferry foxglove                     # open ws://127.0.0.1:8765 in Foxglove\n"
      "Exit codes: 0 ok, 1 runtime failure (no ferryd, unknown topic), 2 usage or configuration "
      "error.");

  add_topic_commands(app, verbs, run);
  add_node_commands(app, verbs.node_list, run);
  add_service_commands(app, verbs, run);
  add_pool_command(app, verbs.pool, run);
  add_top_command(app, verbs.top, run);
  add_config_commands(app, verbs.config_check, run);
  add_bench_commands(app, verbs, run);
  add_clean_command(app, verbs.clean, run);
  add_bag_commands(app, verbs.bag_info, run);
  add_gen_commands(app, verbs, run);
  add_bridge_command(app, verbs.bridge, run);
  add_foxglove_command(app, verbs.foxglove, run);
  add_record_command(app, verbs.record, run);
  add_play_command(app, verbs.play, run);
  // Last, so that every verb registered above gets them.
  add_global_flags(app, run.context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help or --version: CLI11 prints them to stdout
  } catch (const CLI::ParseError& e) {
    // Not app.exit(): CLI11 prints two lines without our prefix and, for an
    // unknown verb, does not name it (docs/cli/index.md: one sentence, "ferry: ").
    std::fprintf(stderr, "ferry: %s\n",
                 usage_error(parsed_chain(app), kind_of(e), e.what()).c_str());
    return kExitUsage;
  } catch (const Failure& f) {
    std::fprintf(stderr, "ferry: %s\n", f.what());
    return f.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ferry: %s\n", e.what());
    return kExitRuntime;
  }
  return run.code;
}

}  // namespace ferry::cli
