// ferry bridge: ferry topics to and from Eclipse Cyclone DDS (DESIGN 1.11),
// in the foreground until Ctrl-C. The work is in tools/bridge.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "ferry/bridge/bridge.hpp"
#include "interrupt.hpp"
#include "usage.hpp"

namespace ferry::cli {

namespace {

struct BridgeCliOptions {
  std::optional<std::uint32_t> dds_domain;
  std::vector<std::string> exports, imports;
  double stats_seconds = 5;
};

void bridge(const Context& context, const BridgeCliOptions& o) {
  bridge::Options options;
  options.domain = context.domain();
  options.dds_domain = o.dds_domain;
  options.exports = o.exports;
  options.imports = o.imports;
  options.stats_interval =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.stats_seconds * 1000));
  config::Config config;
  {
    auto client = connect_daemon(context);
    config = fetch_config(client);
  }
  // Logs on stderr; stdout carries the counts.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ferry-bridge"));
  catch_interrupts();
  try {
    (void)bridge::run(config, options, [] { return interrupted(); });
  } catch (const bridge::BridgeError& e) {
    throw Failure(kExitRuntime, e.what());
  }
}

}  // namespace

void add_bridge_command(CLI::App& app, Context& context) {
  auto* cmd =
      app.add_subcommand("bridge", "Bridge topics to and from DDS (Eclipse Cyclone DDS, ROS 2)");
  auto o = std::make_shared<BridgeCliOptions>();
  cmd->add_option("--dds-domain", o->dds_domain, "The DDS domain id (default 0)");
  cmd->add_option("--export", o->exports, "Local topics written to DDS as rt/TOPIC")
      ->expected(1, -1);
  cmd->add_option("--import", o->imports, "DDS topics rt/TOPIC published locally")->expected(1, -1);
  cmd->add_option("--stats", o->stats_seconds, "Seconds between the printed counts")
      ->check(above_zero())
      ->capture_default_str();
  cmd->footer(
      "Runs in the foreground until Ctrl-C, as a node named ferry-bridge. Each topic must be\n"
      "declared in the configuration ferryd serves; its DDS type is pkg::msg::dds_::Name_, wire\n"
      "form little-endian CDR, and the log shows the matching ROS 2 .msg definition.\n"
      "What this bridge imported is never exported again.\n"
      "Examples:\n"
      "  ferry bridge --export robot/pose --import robot/cmd\n"
      "  ferry bridge --dds-domain 7 --export camera/frames");
  cmd->callback([&context, o] { bridge(context, *o); });
}

}  // namespace ferry::cli
