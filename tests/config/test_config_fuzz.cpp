// A bounded, seeded fuzz test of the configuration loader (issue 19): valid
// configurations mutated by bytes, by lines and by structure (deep nesting,
// huge numbers, random keys, long type chains, aliases), loaded from memory
// and from files. Whatever the input, the loader returns diagnostics that
// each carry file:line:col and a "what; expected" sentence, or a valid
// configuration; never a crash, a hang or a stray exception. ASan+UBSan CI
// runs it like every unit test. A fixed seed makes a failure reproduce:
// the failing text is printed.

#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "temp_files.hpp"
#include "text_lines.hpp"

using namespace ferry::test;

using namespace ferry::config;

namespace {

constexpr int kIterations = 1500;
constexpr int kFileEvery = 25;  // every n-th text also goes through a file

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

// A small configuration exercising nesting, arrays, allow lists and pool.
const char* const kNested = R"(domain: nest
types:
  Inner: { fields: [{ name: a, type: u16 }, { name: b, type: "char[3]" }] }
  Outer:
    fields:
      - { name: inner, type: "Inner[4]" }
      - { name: flag, type: bool }
  Raw: { size: 64, align: 8 }
topics:
  - { name: o, type: Outer, capacity: 8, history: 2, max_held: 3 }
  - { name: r, type: Raw, allow: { publish: [root], subscribe: [adm, ops] } }
  - { name: b, type: bytes, max_size: 1MiB, policy: block, block_timeout_ms: 10 }
)";

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::size_t below(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  std::string mutate(const std::string& seed) {
    std::string text = seed;
    for (std::size_t n = 0, count = 1 + below(3); n < count; ++n) mutate_once(text);
    return text;
  }

 private:
  static constexpr std::string_view kNoise = ":{}[]-\"' \n#&*!|>,09a\t~?%@`\\";

  void mutate_once(std::string& text) {
    switch (below(12)) {
      case 0:  // flip a bit
        if (!text.empty()) text[below(text.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // a YAML-significant character somewhere
        text.insert(below(text.size() + 1), 1, kNoise[below(kNoise.size())]);
        break;
      case 2:  // truncate
        text.resize(below(text.size() + 1));
        break;
      case 3:  // erase a run
        if (!text.empty()) text.erase(below(text.size()), 1 + below(16));
        break;
      case 4:
        with_lines(text, [this](std::vector<std::string>& lines) {  // duplicate a line
          const std::size_t at = below(lines.size());
          lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]);
        });
        break;
      case 5:
        with_lines(text, [this](std::vector<std::string>& lines) {  // swap two lines
          std::swap(lines[below(lines.size())], lines[below(lines.size())]);
        });
        break;
      case 6:
        with_lines(text, [this](std::vector<std::string>& lines) {  // re-indent a line
          auto& line = lines[below(lines.size())];
          if (below(2) == 0 && line.starts_with(" ")) {
            line.erase(0, 1 + below(2));
          } else {
            line.insert(0, 1 + below(3), ' ');
          }
        });
        break;
      case 7:  // replace a number with a huge or odd one
        replace_number(text);
        break;
      case 8:
        with_lines(text, [this](std::vector<std::string>& lines) {  // a random key
          const std::size_t at = below(lines.size());
          const std::string indent(lines[at].find_first_not_of(' ') == std::string::npos
                                       ? 0
                                       : lines[at].find_first_not_of(' '),
                                   ' ');
          lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at),
                       indent + random_word() + ": " + random_word());
        });
        break;
      case 9:  // deep nesting of flow collections, around the limit of yaml-cpp
        nest(text);
        break;
      case 10:  // a long chain of types, sometimes closed into a cycle
        chain(text);
        break;
      default:  // anchors and aliases
        text.insert(below(text.size() + 1), below(2) == 0 ? " &a " : " *a ");
        break;
    }
  }

  template <class F>
  void with_lines(std::string& text, F&& edit) {
    auto lines = lines_of(text);
    if (lines.empty()) return;
    edit(lines);
    text = join_lines(lines);
  }

  std::string random_word() {
    static const std::vector<std::string> kWords{
        "capacity", "types",    "fields", "name",  "type",   "size",     "align",
        "allow",    "max_size", "pool",   "count", "policy", "history",  "Pose",
        "bytes",    "u8[0]",    "char",   "~",     "\"\"",   "[]",       "{}",
        "-1",       "0x10",     "1e309",  "4KiB",  "true",   "!!binary", "null"};
    if (below(4) != 0) return kWords[below(kWords.size())];
    std::string word;
    for (std::size_t n = 0, size = 1 + below(12); n < size; ++n)
      word += static_cast<char>('a' + below(26));
    return word;
  }

  void replace_number(std::string& text) {
    static const std::vector<std::string> kNumbers{"0",
                                                   "-0",
                                                   "18446744073709551615",
                                                   "18446744073709551616",
                                                   "99999999999999999999999999",
                                                   "4294967296",
                                                   "65537",
                                                   "1073741825",
                                                   "1e9",
                                                   "0x40",
                                                   "1GiB",
                                                   "17179869184GiB"};
    const std::size_t start = text.find_first_of("0123456789", below(text.size() + 1));
    if (start == std::string::npos) return;
    const std::size_t end = text.find_first_not_of("0123456789", start);
    text.replace(start, (end == std::string::npos ? text.size() : end) - start,
                 kNumbers[below(kNumbers.size())]);
  }

  void nest(std::string& text) {
    const std::size_t depth = below(2) == 0 ? 1 + below(64) : 1900 + below(200);
    const bool maps = below(2) == 0;
    std::string deep;
    for (std::size_t i = 0; i < depth; ++i) deep += maps ? "{a: " : "[";
    deep += "1";
    for (std::size_t i = 0; i < depth; ++i) deep += maps ? "}" : "]";
    with_lines(text, [&](std::vector<std::string>& lines) {
      auto& line = lines[below(lines.size())];
      const std::size_t colon = line.find(": ");
      if (colon == std::string::npos) {
        line += deep;
      } else {
        line = line.substr(0, colon + 2) + deep;
      }
    });
  }

  void chain(std::string& text) {
    const std::size_t length = 1 + below(2) * below(3 * kMaxTypeNesting) + below(8);
    const bool closed = below(4) == 0;
    std::string types;
    for (std::size_t i = 0; i < length; ++i) {
      const std::string next =
          i + 1 < length ? "C" + std::to_string(i + 1) : (closed ? "C0" : "u8[2]");
      types += "  C" + std::to_string(i) + ": { fields: [{ name: f, type: \"" + next + "\" }] }\n";
    }
    const std::size_t at = text.find("types:\n");
    if (at == std::string::npos) {
      text += "types:\n" + types + "topics: [{ name: chained, type: C0 }]\n";
    } else {
      text.insert(at + 7, types);
    }
  }

  std::mt19937_64 rng_;
};

// Diagnostics as the contract says, or a configuration that holds up.
void check_outcome(const std::string& text, const std::vector<Diagnostic>& diagnostics,
                   const std::string& file) {
  CHECK(diagnostics.size() <= kMaxReportedProblems + 1);
  for (const Diagnostic& d : diagnostics) {
    REQUIRE(d.file == file);
    REQUIRE(d.line >= 1);  // file:line:col, always
    REQUIRE(d.column >= 1);
    REQUIRE(d.message.find("; ") != std::string::npos);  // "what is wrong; what was expected"
  }
  if (!diagnostics.empty()) {
    try {
      (void)load_string(text, file);
      FAIL("load_string accepted what check_string refused");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) == diagnostics.front().to_string());
    }
    return;
  }
  const Config c = load_string(text, file);
  for (const Topic& t : c.topics) {
    CHECK(t.sample_size >= 1);
    CHECK(t.sample_size <= kMaxSampleSize);
    CHECK((t.is_bytes() || c.type_of(t) != nullptr));
  }
}
}  // namespace

TEST_CASE("mutated configurations give positioned diagnostics or a sound configuration") {
  const std::vector<std::string> seeds{read_file(FERRY_CONFIG_EXAMPLES "/demo.yaml"),
                                       read_file(FERRY_CONFIG_EXAMPLES "/minimal.yaml"), kNested};
  for (const auto& seed : seeds) {
    REQUIRE_FALSE(seed.empty());
    REQUIRE(check_string(seed, "seed.yaml").empty());
  }
  char dir_template[] = "/tmp/ferry-fuzz-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir = dir_template;
  const auto file = (dir / "fuzz.yaml").string();

  Mutator mutator{0xC0FF1C};  // fixed seed: a failure reproduces
  int refused = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    const std::string text = mutator.mutate(seeds[mutator.below(seeds.size())]);
    CAPTURE(i);
    CAPTURE(text);
    std::vector<Diagnostic> diagnostics;
    REQUIRE_NOTHROW(diagnostics = check_string(text, "fuzz.yaml"));
    check_outcome(text, diagnostics, "fuzz.yaml");
    if (!diagnostics.empty()) ++refused;
    if (i % kFileEvery == 0) {
      std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
      std::vector<Diagnostic> from_file;
      REQUIRE_NOTHROW(from_file = check_file(file));
      REQUIRE(from_file.size() == diagnostics.size());
      for (std::size_t k = 0; k < from_file.size(); ++k) {
        CHECK(from_file[k].line == diagnostics[k].line);
        CHECK(from_file[k].message == diagnostics[k].message);
      }
    }
  }
  std::filesystem::remove_all(dir);
  MESSAGE(refused << " of " << kIterations << " mutated configurations refused in "
                  << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                  << " s");
  // The mutations reach both outcomes.
  CHECK(refused > kIterations / 2);
  CHECK(refused < kIterations);
}
