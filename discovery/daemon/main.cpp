// ferryd: the discovery daemon of one ferry domain.
//   ferryd --config FILE [--domain NAME] [--foreground] [--log-level LEVEL] [--group G]
// Exit codes: 0 stopped cleanly, 1 runtime failure, 2 usage or configuration error.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "client_access.hpp"
#include "daemon.hpp"
#include "ferry/config/error.hpp"
#include "ferry/config/load.hpp"
#include "ferry/discovery/paths.hpp"

namespace {

struct Args {
  std::string config;
  std::optional<std::string> domain;
  bool foreground = false;
  std::string log_level;
  std::optional<std::string> group;
};

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "ferryd: %s\n", message.c_str());
  return code;
}

// Detaches from the terminal once everything that can fail at start has
// succeeded, so `ferryd --config X` returns only when the domain is served.
void daemonize(const std::string& log_path) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) std::_Exit(0);
  ::setsid();
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path);
  spdlog::default_logger()->sinks() = {sink};
  spdlog::flush_on(spdlog::level::info);  // a daemon's log is read while it runs
  std::freopen("/dev/null", "r", stdin);
  std::freopen("/dev/null", "w", stdout);
  std::freopen("/dev/null", "w", stderr);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"ferryd: the discovery daemon of a ferry domain"};
  app.add_option("--config", args.config, "Topic configuration (YAML)")->required();
  app.add_option("--domain", args.domain, "Domain to serve (else FERRY_DOMAIN, the config's domain:, 'default')");
  app.add_flag("--foreground", args.foreground, "Stay in the foreground and log to stderr");
  app.add_option("--log-level", args.log_level, "trace, debug, info, warn, error (else FERRY_LOG, else info)");
  app.add_option("--group", args.group,
                 "Let this group's members use the domain (group name or gid; objects 0660)");
  app.set_version_flag("--version", "ferryd 0.1.0");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::string level = args.log_level;
  if (level.empty() && std::getenv("FERRY_LOG") != nullptr) level = std::getenv("FERRY_LOG");
  if (level.empty()) level = "info";
  const auto parsed_level = spdlog::level::from_str(level);
  if (parsed_level == spdlog::level::off && level != "off") {
    return fail(2, fmt::format("unknown log level '{}'; expected trace, debug, info, warn, error or off", level));
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("ferryd"));
  spdlog::set_level(parsed_level);

  // The text is kept to be served to tools (GetConfig): they decode samples
  // with the schema this daemon actually loaded.
  ferry::config::Config config;
  std::string config_text;
  try {
    std::error_code ec;
    std::ifstream in;
    if (std::filesystem::is_regular_file(args.config, ec)) in.open(args.config, std::ios::binary);
    if (in.is_open() && in) {
      config_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      config = ferry::config::load_string(config_text, args.config);
    } else {
      config = ferry::config::load_file(args.config);  // its error names the file and why
    }
  } catch (const ferry::config::ConfigError& e) {
    return fail(2, e.what());
  }

  auto domain = ferry::discovery::resolve_domain(args.domain, config.domain);
  if (!domain) return fail(2, domain.error().message);

  std::optional<ferry::discovery::AdmittedGroup> admitted;
  if (args.group) {
    auto found = ferry::discovery::find_group(*args.group);
    if (!found) return fail(2, found.error());
    admitted = std::move(*found);
  }
  const mode_t mode = admitted ? 0660 : 0600;

  auto dir = ferry::discovery::ensure_runtime_dir();
  if (!dir) return fail(1, dir.error().message);
  auto sock_path = ferry::discovery::socket_path(*domain, *dir);
  if (!sock_path) return fail(1, sock_path.error().message);

  auto listener = ferry::discovery::UnixSeqpacketSocket::listen(*sock_path);
  if (!listener) return fail(1, listener.error().message);
  if (admitted) {
    if (::chown(sock_path->c_str(), static_cast<uid_t>(-1), admitted->gid) != 0 ||
        ::chmod(sock_path->c_str(), 0660) != 0) {
      return fail(1, fmt::format("cannot give group '{}' access to {}", admitted->name, sock_path->string()));
    }
  }

  try {
    ferry::discovery::DaemonOptions options{*domain, sock_path->string(), mode, admitted,
                                            args.config, std::move(config_text)};
    // No live daemon holds the domain (listen() would have refused): what is
    // left in /dev/shm under its prefix belongs to a dead one.
    ferry::discovery::Daemon daemon(options, config, std::move(*listener));
    if (!args.foreground) daemonize((*dir / (*domain + ".log")).string());
    return daemon.run();
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
}
