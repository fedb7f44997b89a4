// ferry-bench-ring's command line, parsed by CLI11.
#include "options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace ferry::bench_ring {

namespace {

// A whole number of at least `min`, as a CLI11 check. Written here rather
// than CLI::Range / CLI::NonNegativeNumber because those accept "2.5" and
// word their errors with the bounds of a double; this one says what is
// wanted, and CLI11 puts the flag's name in front.
template <class T>
CLI::Validator whole_number(T min, const char* what) {
  return CLI::Validator(
      [min, what](std::string& text) -> std::string {
        T value{};
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc{} && end == text.data() + text.size() && value >= min) return {};
        return std::string(what) + ", not '" + text + "'";
      },
      "");
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  CLI::App app{
      "ferry-bench-ring: the shared-memory ring against a Unix socket and a pipe, measured in the "
      "same run",
      "ferry-bench-ring"};
  app.footer("Example:\n  ferry-bench-ring --quick --only raw-ring,unix-socket --json\n");

  std::uint64_t repeat = 0;
  std::uint64_t messages = 0;
  std::uint64_t rounds = 0;
  std::pair<int, int> cpus{o.cpu_a, o.cpu_b};
  bool quick = false;
  // A count flag: a whole number above 0 (0 runs or rounds would measure
  // nothing); repeated, the last one counts, as before CLI11.
  auto count = [&](const char* name, std::uint64_t& value, const char* help) {
    return app.add_option(name, value, help)
        ->type_name("N")
        ->check(whole_number<std::uint64_t>(1, "must be a positive integer"))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  const auto* repeat_opt = count(
      "--repeat", repeat, "Interleaved repetitions, medians reported (default 5, at most 1000)");
  // Exactly two numbers: "0,1,2" is an error rather than a guess.
  app.add_option("--cpus", cpus, "CPUs for the two processes (default 0,1)")
      ->delimiter(',')
      ->type_name("A,B")
      ->check(whole_number<int>(0, "takes two CPU numbers (e.g. 0,1)"));
  app.add_flag("--quick", quick, "Short run (demo): fewer messages and rounds, 3 repeats");
  app.add_flag("--json", o.json, "Machine-readable output (latency/throughput objects)");
  const auto* messages_opt =
      count("--messages", messages, "Ring throughput messages per run (socket/pipe: N/12)");
  const auto* rounds_opt =
      count("--rounds", rounds, "Ping-pong rounds per run (sleeping transports: N/10)");
  // The check's own description would repeat the list in the help.
  app.add_option(
         "--only", o.only,
         "Run only these transports: raw-ring, raw-ring-batch, raw-ring-futex, raw-ring-sleep, "
         "unix-socket, pipe")
      ->delimiter(',')
      ->type_name("T,...")
      ->check(CLI::IsMember(std::vector<std::string>(kTransports.begin(), kTransports.end()))
                  .description(""));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) std::exit(app.exit(e));  // --help
    // One line, not CLI11's two (its "Run with --help" goes in the same line).
    std::fprintf(stderr, "ferry-bench-ring: %s (see --help)\n", e.what());
    std::exit(2);
  }

  o.cpu_a = cpus.first;
  o.cpu_b = cpus.second;
  // --quick first, so that --repeat, --messages and --rounds given with it
  // take their own values.
  if (quick) {
    o.repeat = 3;
    o.ring_messages = 1'000'000;
    o.syscall_messages = 100'000;
    o.spin_rounds = 50'000;
    o.sleep_rounds = 5'000;
  }
  if (*repeat_opt) o.repeat = static_cast<int>(std::min<std::uint64_t>(repeat, 1000));
  if (*messages_opt) {
    o.ring_messages = messages;
    o.syscall_messages = std::max<std::uint64_t>(1000, messages / 12);
  }
  if (*rounds_opt) {
    o.spin_rounds = rounds;
    o.sleep_rounds = std::max<std::uint64_t>(100, rounds / 10);
  }
  return o;
}

}  // namespace ferry::bench_ring
