// Hostile configurations (issue 19, items 4 to 6): a chain of 10,000 nested
// types, tens of thousands of misspelt names, and files that are endless,
// huge or never end. Each is refused quickly with a sentence, never a crash,
// a hang or unbounded memory.

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/schema.hpp"
#include "temp_dir.hpp"

using namespace ferry::config;

namespace {
std::string all(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) out += d.to_string() + "\n";
  return out;
}

// Types T0 -> T1 -> ... -> T(n-1), the last holding a u8; a topic uses T0.
std::string chain(std::size_t n, bool closed = false) {
  std::string y = "types:\n";
  for (std::size_t i = 0; i + 1 < n; ++i)
    y += "  T" + std::to_string(i) + ": { fields: [{ name: next, type: T" + std::to_string(i + 1) +
         " }] }\n";
  y += "  T" + std::to_string(n - 1) +
       ": { fields: [{ name: next, type: " + (closed ? std::string("T0") : std::string("u8")) +
       " }] }\n";
  y += "topics:\n  - { name: t, type: T0 }\n";
  return y;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `body` in a child killed after `seconds` (a hang fails the test
// instead of stalling the suite); true when it exited 0.
bool in_child_within(unsigned seconds, const std::function<bool()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(seconds);
    std::_Exit(body() ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) MESSAGE("the child died of signal " << WTERMSIG(status));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
}  // namespace

TEST_CASE("a chain of 10,000 nested types is refused quickly, at its first field") {
  const std::string y = chain(10'000);
  const auto start = std::chrono::steady_clock::now();
  const auto d = check_string(y, "t.yaml");
  MESSAGE("10,000-deep chain refused in " << seconds_since(start) << " s");
  INFO(all(d));
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() ==
        "t.yaml:2:38: type 'T0' nests types 10000 levels deep (T0.next -> T1.next -> T2.next -> "
        "... -> T9998.next -> T9999); expected at most 32 levels of nested types");
  CHECK(seconds_since(start) < 60);  // generous for sanitizer builds; 1 s in a normal one
}

TEST_CASE("nesting is refused one level past the limit, and accepted at it") {
  const Config ok = load_string(chain(kMaxTypeNesting), "t.yaml");
  CHECK(ok.schema.types().size() == kMaxTypeNesting);

  const std::string y = chain(kMaxTypeNesting + 1);
  const auto d = check_string(y, "t.yaml");
  INFO(all(d));
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() ==
        "t.yaml:2:38: type 'T0' nests types 33 levels deep (T0.next -> T1.next -> T2.next -> ... "
        "-> T31.next -> T32); expected at most 32 levels of nested types");
  CHECK_THROWS_AS((void)load_string(y, "t.yaml"), ConfigError);
}

TEST_CASE("a cycle through 2,000 types is refused without recursing, its chain abbreviated") {
  const auto d = check_string(chain(2'000, true), "t.yaml");
  INFO(all(d));
  REQUIRE_FALSE(d.empty());
  bool cycle = false;
  for (const auto& diagnostic : d) {
    CHECK(diagnostic.line >= 1);
    CHECK(diagnostic.to_string().size() < 400);  // the chain is abbreviated
    cycle = cycle || diagnostic.message.starts_with(
                         "recursive type: 'T0' contains itself (T0.next -> T1.next -> T2.next -> "
                         "... -> T1998.next -> T1999.next -> T0)");
  }
  CHECK(cycle);
}

TEST_CASE("20,000 unknown type names are reported in bounded time, the first with suggestions") {
  std::string y = "types:\n";
  for (int i = 0; i < 10'000; ++i)
    y += "  Type" + std::to_string(i) + ": { fields: [{ name: x, type: Tpye" + std::to_string(i) +
         " }] }\n";
  y += "topics:\n";
  for (int i = 0; i < 10'000; ++i)
    y += "  - { name: t" + std::to_string(i) + ", type: Tpye" + std::to_string(i) + " }\n";
  const auto start = std::chrono::steady_clock::now();
  const auto d = check_string(y, "t.yaml");
  MESSAGE("20,000 unknown type names checked in " << seconds_since(start) << " s");
  CHECK(seconds_since(start) < 60);  // generous for sanitizer builds; over 100 s before the fix
  REQUIRE(d.size() == kMaxReportedProblems + 1);
  CHECK(d[0].to_string() ==
        "t.yaml:2:38: unknown field type 'Tpye0' of field 'x'; did you mean 'Type0'?");
  CHECK(d[kMaxReportedProblems - 1].line == kMaxReportedProblems + 1);
  const Diagnostic& more = d.back();
  CHECK(more.to_string() == "t.yaml:" + std::to_string(kMaxReportedProblems + 2) +
                                ":40: 19900 more problems from here on are not listed; expected at "
                                "most 100 at once (fix these and check again)");
}

TEST_CASE("a long misspelt name is not compared at length, and still gets an answer") {
  const std::string long_name(100'000, 'x');
  const std::string y = "types:\n  T: { fields: [{ name: a, type: " + long_name +
                        " }] }\ntopics:\n  - { name: t, type: " + long_name + " }\n";
  const auto start = std::chrono::steady_clock::now();
  const auto d = check_string(y, "t.yaml");
  CHECK(seconds_since(start) < 5);
  INFO(all(d));
  REQUIRE(d.size() == 2);
  CHECK(d[0].message.starts_with("unknown field type 'xxx"));
  CHECK(d[1].message.starts_with("undeclared type 'xxx"));
}

TEST_CASE("a FIFO is refused without waiting for a writer") {
  ferry::test::TempDir dir("cfg");
  const auto fifo = dir / "topics.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(in_child_within(5, [&] {
    const auto d = check_file(fifo);
    return d.size() == 1 && d[0].to_string() == fifo.string() +
                                                    ": is a FIFO, not a regular file; expected a "
                                                    "YAML file";
  }));
  CHECK(in_child_within(5, [&] {
    try {
      (void)load_file(fifo);
    } catch (const ConfigError& e) {
      return std::string(e.what()).ends_with("is a FIFO, not a regular file; expected a YAML file");
    }
    return false;
  }));
}

TEST_CASE("devices and directories are refused as not regular files") {
  ferry::test::TempDir dir("cfg");
  const auto zero = check_file("/dev/zero");
  REQUIRE(zero.size() == 1);
  CHECK(zero[0].to_string() ==
        "/dev/zero: is a character device, not a regular file; expected a YAML file");
  const auto directory = dir / "conf.d";
  std::filesystem::create_directory(directory);
  const auto d = check_file(directory);
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() ==
        directory.string() + ": is a directory, not a regular file; expected a YAML file");
  const auto missing = check_file(dir / "missing.yaml");
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].message ==
        "cannot read: No such file or directory; expected a readable YAML file");
}

TEST_CASE("a file over the size limit is refused by its size, one at the limit is read") {
  ferry::test::TempDir dir("cfg");
  const auto big = dir / "big.yaml";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, kMaxConfigFileSize + 1);  // sparse: nothing written
  const auto d = check_file(big);
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() == big.string() +
                                ": is 4194305 bytes, over the 4 MiB limit for a configuration "
                                "file; expected a smaller file");
  CHECK_THROWS_AS((void)load_file(big), ConfigError);

  std::filesystem::resize_file(big, kMaxConfigFileSize);
  const auto text = read_config_text(big);
  REQUIRE(text.has_value());
  CHECK(text->size() == kMaxConfigFileSize);
}

TEST_CASE("\"did you mean\" is computed for the first misspelt type names only") {
  std::vector<TypeDecl> decls;
  for (std::size_t i = 0; i < kMaxSuggestions + 5; ++i) {
    TypeDecl d;
    d.name = "Type" + std::to_string(i);
    d.pos = {i + 1, 1};
    d.fields.push_back(FieldDecl{"x", "Tpye" + std::to_string(i), {i + 1, 2}, {i + 1, 3}});
    decls.push_back(std::move(d));
  }
  std::vector<Diagnostic> errors;
  (void)build_schema(decls, "t.yaml", errors);
  REQUIRE(errors.size() == decls.size());
  CHECK(errors.front().message == "unknown field type 'Tpye0' of field 'x'; did you mean 'Type0'?");
  CHECK(errors[kMaxSuggestions - 1].message.ends_with("did you mean 'Type99'?"));
  CHECK(errors[kMaxSuggestions].message ==
        "unknown field type 'Tpye100' of field 'x'; expected bool, i8, i16, i32, i64, u8, u16, "
        "u32, u64, f32, f64, char[N], string<=N, T[N], T[<=N] or a type declared under 'types'");
}

TEST_CASE("read_config_text returns the text of a regular file") {
  ferry::test::TempDir dir("cfg");
  const auto path = dir / "ok.yaml";
  std::ofstream(path) << "domain: demo\n";
  const auto text = read_config_text(path);
  REQUIRE(text.has_value());
  CHECK(*text == "domain: demo\n");
  const auto fifo = dir / "fifo.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto refused = read_config_text(fifo);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().line == 0);
  CHECK(refused.error().file == fifo.string());
}

namespace {
// One anchored list of `users` user names in the first topic's allow list,
// aliased by the other topics': a small file that reads as users x topics
// nodes. The aliases start on line users + 8.
std::string alias_bomb(std::size_t users, std::size_t topics) {
  std::string y =
      "types:\n  P: { fields: [{ name: x, type: u8 }] }\ntopics:\n  - name: t0\n    type: P\n"
      "    allow:\n      publish: &everyone\n";
  for (std::size_t i = 0; i < users; ++i) y += "        - u" + std::to_string(i) + "\n";
  y += "      subscribe: *everyone\n";
  for (std::size_t i = 1; i < topics; ++i) {
    y += "  - { name: t" + std::to_string(i) +
         ", type: P, allow: { publish: *everyone, subscribe: *everyone } }\n";
  }
  return y;
}
}  // namespace

TEST_CASE("a file whose aliases expand past the node limit is refused at an alias, quickly") {
  // 20,000 users x 5,000 topics x 2 lists: 200 million nodes from ~0.5 MiB.
  const std::string y = alias_bomb(20'000, 5'000);
  CHECK(y.size() < 800'000);
  CHECK(in_child_within(60, [&] {
    const auto start = std::chrono::steady_clock::now();
    const auto d = check_string(y, "bomb.yaml");
    const double took = seconds_since(start);
    std::printf("alias bomb refused in %.2f s: %s", took, all(d).c_str());
    if (d.size() != 1) return false;
    const std::string text = d[0].to_string();
    const std::size_t line = std::stoul(text.substr(std::string("bomb.yaml:").size()));
    return text.starts_with("bomb.yaml:") && line > 20'008 && line < 20'008 + 5'000 &&
           text.find("more than 1000000 YAML nodes") != std::string::npos && took < 20;
  }));
}

TEST_CASE("aliases that stay under the node limit are read as copies") {
  const std::string y = alias_bomb(100, 50);  // 100 x 50 x 2 = 10,000 nodes
  const auto d = check_string(y, "ok.yaml");
  INFO(all(d));
  CHECK(d.empty());
}
