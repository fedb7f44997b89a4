#pragma once
// Each file registers its verbs on the CLI11 app; the callback runs the verb.

#include <CLI/CLI.hpp>

#include "cli_context.hpp"
#include "ferry/config/config.hpp"

namespace ferry::cli {

void add_config_commands(CLI::App& app, Context& context);  // cmd_config.cpp
void add_topic_commands(CLI::App& app, Context& context);   // cmd_topic.cpp: list, info
void add_echo_command(CLI::App& topic, Context& context);   // cmd_echo.cpp
void add_pub_command(CLI::App& topic, Context& context);    // cmd_pub.cpp
void add_rate_commands(CLI::App& topic, Context& context);  // cmd_rate.cpp: hz, bw
void add_delay_command(CLI::App& topic, Context& context);  // cmd_delay.cpp
void add_node_commands(CLI::App& app, Context& context);    // cmd_node.cpp
void add_pool_command(CLI::App& app, Context& context);     // cmd_pool.cpp
void add_top_command(CLI::App& app, Context& context);      // cmd_top.cpp
void add_bench_commands(CLI::App& app, Context& context);   // cmd_bench.cpp: latency, throughput
void add_clean_command(CLI::App& app, Context& context);    // cmd_clean.cpp
void add_bag_commands(CLI::App& app, Context& context);     // cmd_bag.cpp: info
void add_record_command(CLI::App& app, Context& context);   // cmd_record.cpp
void add_play_command(CLI::App& app, Context& context);     // cmd_play.cpp
void add_bridge_command(CLI::App& app, Context& context);   // cmd_bridge.cpp
void add_gen_commands(CLI::App& app, Context& context);     // cmd_gen.cpp: cpp, msg

// The configuration in FILE; its problems are printed as `ferry config check`
// prints them (FILE:LINE:COL: message) and end the verb with kExitUsage.
config::Config load_checked(const std::string& file);  // cmd_config.cpp

}  // namespace ferry::cli
