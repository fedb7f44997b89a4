// ferry foxglove: serves the domain over the Foxglove WebSocket protocol
// (docs/foxglove.md), in the foreground until Ctrl-C. The work is in
// tools/foxglove.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <ferry/ferry.hpp>
#include <optional>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "ferry/foxglove/server.hpp"

namespace ferry::cli {

namespace {

void foxglove(const Context& context, const FoxgloveCliOptions& o) {
  if (o.port > 65535)
    throw Failure(kExitUsage, fmt::format("--port {} is not a TCP port (0 to 65535)", o.port));
  if (o.max_clients == 0) throw Failure(kExitUsage, "--max-clients must be at least 1");
  if (!(o.send_buffer_mib >= 1.0 && o.send_buffer_mib <= 65536.0))
    throw Failure(kExitUsage,
                  fmt::format("--send-buffer {} MiB: must be from 1 to 65536", o.send_buffer_mib));
  foxglove::Options options;
  options.domain = context.domain();
  options.address = o.address;
  options.port = static_cast<std::uint16_t>(o.port);
  options.topics = o.topics;
  options.max_clients = o.max_clients;
  options.send_buffer = static_cast<std::size_t>(std::llround(o.send_buffer_mib * 1024 * 1024));

  // One connection to ferryd, made again when it stops answering (ferryd
  // restarted): the server keeps its channels meanwhile.
  std::optional<discovery::Client> client;
  client.emplace(connect_daemon(context));
  const auto with_client = [&](const auto& ask) {
    try {
      if (!client) client.emplace(connect_daemon(context));
      return ask(*client);
    } catch (...) {
      client.reset();
      throw;
    }
  };
  const foxglove::DomainQueries queries{
      .list_topics = [&] { return with_client([](auto& c) { return list_topics(c); }); },
      .fetch_config = [&] { return with_client([](auto& c) { return fetch_config(c); }); }};

  // Logs on stderr; stdout carries the address to open.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ferry-foxglove"));
  try {
    foxglove::run(options, queries, [&](std::uint16_t port) {
      std::printf("ferry foxglove: serving domain '%s' at ws://%s:%u (Ctrl-C stops)\n",
                  options.domain.c_str(), options.address.c_str(), static_cast<unsigned>(port));
      std::fflush(stdout);
    });
  } catch (const foxglove::FoxgloveError& e) {
    throw Failure(kExitRuntime, e.what());
  } catch (const ferry::Error& e) {
    throw Failure(kExitRuntime, e.what());
  }
}

}  // namespace

int run_foxglove(const FoxgloveCliOptions& o, const Context& context) {
  foxglove(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
