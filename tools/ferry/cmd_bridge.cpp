// ferry bridge: ferry topics to and from Eclipse Cyclone DDS (docs/bridge.md),
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

namespace ferry::cli {

namespace {

void bridge(const Context& context, const BridgeCliOptions& o) {
  bridge::Options options;
  options.domain = context.domain();
  options.dds_domain = o.dds_domain;
  options.exports = o.exports;
  options.imports = o.imports;
  options.stats_interval =
      std::chrono::milliseconds(static_cast<std::int64_t>(o.stats_seconds * 1000));
  options.export_spin = std::chrono::microseconds(o.export_spin_us);
  options.export_services = o.export_services;
  options.import_services = o.import_services;
  options.service_timeout = std::chrono::milliseconds(o.service_timeout_ms);
  try {
    bridge::check_options(options);  // before ferryd is asked: a wrong flag says so first
  } catch (const bridge::BridgeError& e) {
    throw Failure(kExitRuntime, e.what());
  }
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

int run_bridge(const BridgeCliOptions& o, const Context& context) {
  bridge(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
