#pragma once
// The verbs of `ferry`, each run from its parsed flags (cli_options.cpp
// declares the flags and calls these). A verb returns its exit code, or
// throws Failure with the code and the message.

#include <string>

#include "cli_context.hpp"
#include "ferry/config/config.hpp"
#include "verb_options.hpp"

namespace ferry::cli {

int run_topic_list(const TopicListOptions& o, const Context& context);      // cmd_topic.cpp
int run_topic_info(const TopicInfoOptions& o, const Context& context);      // cmd_topic.cpp
int run_echo(const EchoOptions& o, const Context& context);                 // cmd_echo.cpp
int run_pub(const PubOptions& o, const Context& context);                   // cmd_pub.cpp
int run_rate(Measure m, const RateOptions& o, const Context& context);      // cmd_rate.cpp: hz, bw
int run_delay(const DelayOptions& o, const Context& context);               // cmd_delay.cpp
int run_service_list(const ServiceListOptions& o, const Context& context);  // cmd_service.cpp
int run_service_info(const ServiceInfoOptions& o, const Context& context);  // cmd_service.cpp
int run_service_call(const ServiceCallOptions& o, const Context& context);  // cmd_service.cpp
int run_node_list(const NodeListOptions& o, const Context& context);        // cmd_node.cpp
int run_pool(const PoolOptions& o, const Context& context);                 // cmd_pool.cpp
int run_top(const TopOptions& o, const Context& context);                   // cmd_top.cpp
int run_config_check(const ConfigCheckOptions& o, const Context& context);  // cmd_config.cpp
int run_bench_latency(const BenchLatencyOptions& o, const Context& context);  // cmd_bench.cpp
int run_bench_throughput(const BenchThroughputOptions& o, const Context& context);
int run_bench_rpc(const BenchRpcOptions& o, const Context& context);        // cmd_bench.cpp
int run_bench_scale(const BenchScaleOptions& o, const Context& context);    // cmd_bench.cpp
int run_bench_fanout(const BenchFanoutOptions& o, const Context& context);  // cmd_bench.cpp
int run_clean(const CleanOptions& o, const Context& context);               // cmd_clean.cpp
int run_bag_info(const BagInfoOptions& o, const Context& context);          // cmd_bag.cpp
int run_gen_cpp(const GenCppOptions& o, const Context& context);            // cmd_gen.cpp
int run_gen_c(const GenCOptions& o, const Context& context);                // cmd_gen.cpp
int run_gen_msg(const GenMsgOptions& o, const Context& context);            // cmd_gen.cpp
int run_gen_yaml(const GenYamlOptions& o, const Context& context);          // cmd_gen.cpp
int run_bridge(const BridgeCliOptions& o, const Context& context);          // cmd_bridge.cpp
int run_foxglove(const FoxgloveCliOptions& o, const Context& context);      // cmd_foxglove.cpp
int run_record(const RecordOptions& o, const Context& context);             // cmd_record.cpp
int run_play(const PlayOptions& o, const Context& context);                 // cmd_play.cpp

// The help of `ferry bench --transports` (it names the inline limit and
// whether iceoryx is built in).
std::string bench_transports_help();  // cmd_bench.cpp

// The configuration in FILE; its problems are printed as `ferry config check`
// prints them (FILE:LINE:COL: message) and end the verb with kExitUsage.
config::Config load_checked(const std::string& file);  // cmd_config.cpp

}  // namespace ferry::cli
