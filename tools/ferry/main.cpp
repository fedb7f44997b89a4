// ferry: inspect and drive a ferry domain from the command line.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli_context.hpp"
#include "commands.hpp"
#include "usage.hpp"

int main(int argc, char** argv) {
  using namespace ferry::cli;
  Context context;
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
      "  ferry clean                      # after a ferryd was killed\n"
      "  ferry record --all -o run.mcap   # Ctrl-C to stop\n"
      "  ferry bag info run.mcap\n"
      "  ferry play run.mcap\n"
      "  ferry bridge --export robot/pose   # onto DDS / ROS 2\n"
      "Exit codes: 0 ok, 1 runtime failure (no ferryd, unknown topic), 2 usage or configuration "
      "error.");

  add_topic_commands(app, context);
  add_node_commands(app, context);
  add_pool_command(app, context);
  add_top_command(app, context);
  add_config_commands(app, context);
  add_bench_commands(app, context);
  add_clean_command(app, context);
  add_bag_commands(app, context);
  add_gen_commands(app, context);
  add_bridge_command(app, context);
  add_record_command(app, context);
  add_play_command(app, context);
  // Last, so that every verb registered above gets them.
  add_global_flags(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help or --version: CLI11 prints them to stdout
  } catch (const CLI::ParseError& e) {
    // Not app.exit(): CLI11 prints two lines without our prefix and, for an
    // unknown verb, does not name it (README: one sentence, "ferry: ").
    std::fprintf(stderr, "ferry: %s\n", usage_error(app, e).c_str());
    return kExitUsage;
  } catch (const Failure& f) {
    std::fprintf(stderr, "ferry: %s\n", f.what());
    return f.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ferry: %s\n", e.what());
    return kExitRuntime;
  }
  return kExitOk;
}
