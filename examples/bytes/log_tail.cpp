// Prints the log lines of logs/text as they come, read in place in the
// shared pool (sample->data(), sample->size()), until --count lines came.
// Long lines are cut to their start and size; with --full every line is
// printed whole, one per output line and nothing else (for a file or a pipe).
// Usage: log_tail [count] [--full]
#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "example.hpp"

namespace {

constexpr const char* kUsage = "log_tail [count] [--full]";
constexpr std::size_t kShown = 72;  // characters shown of a long line without --full

int run(int argc, char** argv) {
  std::uint64_t count = 18;
  bool full = false;
  example::App app{"Prints the log lines of logs/text as they come", "log_tail"};
  app.add_option("count", count, "Lines to wait for (default 18)")->check(example::at_least(0));
  app.add_flag("--full", full, "Print every line whole, one per output line and nothing else");
  example::parse(app, argc, argv, kUsage);

  ferry::Node node{"log_tail"};
  auto sub = node.subscriber<ferry::Bytes>("logs/text");
  std::uint64_t bytes = 0;
  for (std::uint64_t received = 0; received < count; ++received) {
    const auto line = example::next_sample(sub, received, std::to_string(count) + " line(s)");
    const std::string_view text(reinterpret_cast<const char*>(line->data()), line->size());
    bytes += text.size();
    if (full) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fputc('\n', stdout);
    } else if (text.size() <= kShown) {
      std::printf("log_tail: %.*s\n", static_cast<int>(text.size()), text.data());
    } else {
      std::printf("log_tail: %.*s... (%zu bytes)\n", static_cast<int>(kShown), text.data(),
                  text.size());
    }
  }
  std::fprintf(full ? stderr : stdout, "log_tail: received %llu line(s), %llu bytes\n",
               static_cast<unsigned long long>(count), static_cast<unsigned long long>(bytes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return example::run("log_tail", [&] { return run(argc, argv); });
}
