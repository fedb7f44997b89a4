// ferry: inspect and drive a ferry domain from the command line.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli_context.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace ferry::cli;
  Context context;
  CLI::App app{"ferry: inspect and drive a ferry domain (topics, nodes, pool)"};
  app.require_subcommand(1);
  app.add_option("--domain", context.domain_flag,
                 "Domain to work on (else FERRY_DOMAIN, else 'default')");
  app.set_version_flag("--version", "ferry 0.1.0");
  app.footer("Examples:\n  ferry topic list\n  ferry --domain demo topic list --json\n"
             "  ferry config check topics.yaml");

  add_config_commands(app, context);
  add_topic_commands(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const Failure& f) {
    std::fprintf(stderr, "ferry: %s\n", f.what());
    return f.code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ferry: %s\n", e.what());
    return kExitRuntime;
  }
  return kExitOk;
}
