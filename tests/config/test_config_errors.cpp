// Every configuration error names file:line:col, what is wrong and what was
// expected. Positions are checked exactly: `at(yaml, token)` is where
// `token` appears in the text, and a few are spelled out literally.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "ferry/config/load.hpp"

using namespace ferry::config;

namespace {
// "t.yaml:LINE:COL: " of the n-th (1-based) occurrence of `token` in `yaml`.
std::string at(std::string_view yaml, std::string_view token, int nth = 1) {
  std::size_t offset = std::string_view::npos;
  for (int i = 0; i < nth; ++i) offset = yaml.find(token, offset + 1);
  REQUIRE(offset != std::string_view::npos);
  const std::string_view before = yaml.substr(0, offset);
  const std::size_t line = 1 + static_cast<std::size_t>(std::ranges::count(before, '\n'));
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column =
      line_start == std::string_view::npos ? offset + 1 : offset - line_start;
  return "t.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

std::string all(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) out += d.to_string() + "\n";
  return out;
}

// The one problem in `yaml`; load_string must throw it too.
std::string only_error(std::string_view yaml) {
  const auto diagnostics = check_string(yaml, "t.yaml");
  const std::string listing = all(diagnostics);
  INFO(listing);
  REQUIRE(diagnostics.size() == 1);
  try {
    (void)load_string(yaml, "t.yaml");
    FAIL("load_string accepted it");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == diagnostics[0].to_string());
  }
  return diagnostics[0].to_string();
}
}  // namespace

TEST_CASE("an unknown key names the closest valid key") {
  const char* y = "domain: demo\ntopcs: []\n";
  CHECK(only_error(y) ==
        "t.yaml:2:1: unknown key 'topcs' at the top level; did you mean 'topics'?");

  const char* topic = R"(types: { T: { size: 8 } }
topics:
  - { name: a, type: T, capasity: 16 }
)";
  CHECK(only_error(topic) ==
        "t.yaml:3:25: unknown key 'capasity' in topic 'a'; did you mean 'capacity'?");

  // The field then also lacks a name: both are true, both are reported.
  const char* field = "types:\n  T:\n    fields:\n      - { nmae: x, type: u8 }\n";
  const auto d = check_string(field, "t.yaml");
  REQUIRE(d.size() == 2);
  CHECK(d[0].to_string() ==
        at(field, "{") + "field 1 of type 'T' has no 'name'; expected { name: x, type: f64 }");
  CHECK(d[1].to_string() ==
        at(field, "nmae") + "unknown key 'nmae' in field 1 of type 'T'; did you mean 'name'?");
}

TEST_CASE("an unknown key with no close match lists the valid keys") {
  const char* y = "liveness: { heartbeat_ms: 100, banana: 3 }\n";
  CHECK(only_error(y) == at(y, "banana") +
                             "unknown key 'banana' in 'liveness'; expected one of: heartbeat_ms, "
                             "timeout_ms");
}

TEST_CASE("a key given twice in one map is an error naming the first") {
  const char* y = R"(types: { T: { size: 8 } }
topics:
  - name: a
    type: T
    capacity: 8
    capacity: 16
)";
  CHECK(only_error(y) == "t.yaml:6:5: duplicate key 'capacity' in topic 'a'; first given at 5:5");
}

TEST_CASE("a value of the wrong type says what was expected") {
  const char* topics = "topics: { name: a }\n";
  CHECK(only_error(topics) == at(topics, "{") +
                                  "wrong type for 'topics': got a map; expected a list like [{ "
                                  "name: robot/pose, type: Pose }]");
  const char* list = "defaults: { capacity: [1, 2] }\n";
  CHECK(only_error(list) == at(list, "[") +
                                "wrong type for 'capacity': got a list; expected an integer from 1 "
                                "to 65536");
  const char* quoted = "defaults: { capacity: \"16\" }\n";
  CHECK(only_error(quoted) == at(quoted, "\"16\"") +
                                  "wrong type for 'capacity': got the string \"16\"; expected an "
                                  "integer from 1 to 65536 (without quotes)");
  const char* word = "defaults: { max_held: lots }\n";
  CHECK(only_error(word) == at(word, "lots") +
                                "wrong type for 'max_held': got 'lots'; expected an integer from 1 "
                                "to 63");
  const char* strict = "strict: yes\n";
  CHECK(only_error(strict) ==
        "t.yaml:1:9: wrong type for 'strict': got 'yes'; expected true or false");
  const char* domain = "domain: { a: 1 }\n";
  CHECK(only_error(domain) == "t.yaml:1:9: wrong type for 'domain': got a map; expected a string");
  const char* fields = "types: { T: { fields: 3 } }\n";
  CHECK(only_error(fields) == at(fields, "3") +
                                  "wrong type for 'fields' of type 'T': got '3'; expected a list "
                                  "like [{ name: x, type: f64 }]");
  const char* item = "topics: [ robot/pose ]\n";
  CHECK(only_error(item) == at(item, "robot/pose") +
                                "wrong type for topic 1: got 'robot/pose'; expected a map like { "
                                "name: robot/pose, type: Pose }");
}

TEST_CASE("a key without a value is reported at the key") {
  const char* y = "defaults:\n  capacity:\n  policy: block\n";
  CHECK(only_error(y) ==
        "t.yaml:2:3: 'capacity' has no value; expected an integer from 1 to 65536");
}

TEST_CASE("an out-of-range number gives the valid range") {
  const char* y = "defaults: { max_publishers: 0 }\n";
  CHECK(only_error(y) == at(y, "0") +
                             "'max_publishers' is 0, out of range; expected an integer from 1 to "
                             "1024");
  const char* negative = "defaults: { block_timeout_ms: -5 }\n";
  CHECK(only_error(negative) == at(negative, "-5") +
                                    "'block_timeout_ms' is -5, out of range; expected an integer "
                                    "from 0 to 86400000");
}

TEST_CASE("an unknown policy lists the three valid ones") {
  const char* y = "defaults: { policy: drop_newest }\n";
  CHECK(only_error(y) == at(y, "drop_newest") +
                             "unknown policy 'drop_newest'; expected one of block, drop_new, "
                             "drop_oldest");
}

TEST_CASE("a capacity that is not a power of two suggests the nearest ones") {
  const char* y = "types: { T: { size: 8 } }\ntopics:\n  - { name: a, type: T, capacity: 12 }\n";
  CHECK(only_error(y) == at(y, "12") +
                             "capacity 12 is not a power of two; expected a power of "
                             "two from 1 to 65536 (e.g. 8 or 16)");
  const char* big = "defaults: { capacity: 131072 }\n";
  CHECK(only_error(big) == at(big, "131072") +
                               "'capacity' is 131072, out of range; expected an integer from 1 to "
                               "65536");
  const char* zero = "defaults: { capacity: 0 }\n";
  CHECK(only_error(zero).starts_with(at(zero, "0") + "'capacity' is 0, out of range"));
}

TEST_CASE("an unknown field type suggests a close one or lists what is valid") {
  const char* typo = "types:\n  T:\n    fields:\n      - { name: x, type: f46 }\n";
  CHECK(only_error(typo) ==
        "t.yaml:4:26: unknown field type 'f46' of field 'x'; did you mean 'f64'?");
  const char* other = "types:\n  T:\n    fields:\n      - { name: q, type: \"quaternion[2]\" }\n";
  CHECK(only_error(other) ==
        at(other, "\"quaternion") +
            "unknown field type 'quaternion' of field 'q'; expected bool, i8, i16, i32, i64, u8, "
            "u16, u32, u64, f32, f64, char[N], string<=N, T[N], T[<=N] or a type declared under "
            "'types'");
  const char* declared =
      "types:\n  Vector3: { size: 24 }\n  T: { fields: [{ name: v, type: Vectr3 }] }\n";
  CHECK(only_error(declared) ==
        at(declared, "Vectr3") +
            "unknown field type 'Vectr3' of field 'v'; did you mean 'Vector3'?");
}

TEST_CASE("malformed field types say what the syntax is") {
  const char* unclosed = "types: { T: { fields: [{ name: x, type: \"u8[4\" }] } }\n";
  CHECK(only_error(unclosed) == at(unclosed, "\"u8[4") +
                                    "invalid field type 'u8[4'; expected T, T[N], T[<=N] or "
                                    "string<=N, e.g. u8, char[16], Pose[4], u8[<=1024], "
                                    "string<=64");
  const char* multi = "types: { T: { fields: [{ name: x, type: \"u8[2][3]\" }] } }\n";
  CHECK(only_error(multi).starts_with(at(multi, "\"u8") +
                                      "multi-dimensional array 'u8[2][3]' is not supported"));
  const char* zero = "types: { T: { fields: [{ name: x, type: \"u8[0]\" }] } }\n";
  CHECK(only_error(zero) == at(zero, "\"u8") + "array length 0 in 'u8[0]'; expected at least 1");
  const char* chr = "types: { T: { fields: [{ name: x, type: char }] } }\n";
  CHECK(only_error(chr) == at(chr, "char") +
                               "field type 'char' of 'x' needs a length; expected char[N], e.g. "
                               "char[16]");
  const char* bytes = "types: { T: { fields: [{ name: x, type: bytes }] } }\n";
  CHECK(only_error(bytes).starts_with(at(bytes, "bytes") +
                                      "'bytes' is a topic type, not a field type"));
  const char* name = "types: { T: { fields: [{ name: x-y, type: u8 }] } }\n";
  CHECK(only_error(name).starts_with(
      at(name, "x-y") + "invalid field name 'x-y' in type 'T'; expected a C identifier"));
}

TEST_CASE("a topic of an undeclared type suggests a declared one") {
  const char* y = R"(types:
  Pose: { size: 40, align: 8 }
topics:
  - { name: robot/pose, type: Pse }
)";
  CHECK(only_error(y) ==
        "t.yaml:4:31: undeclared type 'Pse' for topic 'robot/pose'; did you mean 'Pose'?");
  const char* primitive = "topics: [{ name: a, type: f64 }]\n";
  CHECK(only_error(primitive) ==
        at(primitive, "f64") +
            "undeclared type 'f64' for topic 'a'; expected a type declared "
            "under 'types', or 'bytes'");
}

TEST_CASE("duplicate types, fields and topics name where the first one is") {
  const char* type = "types:\n  T: { size: 8 }\n  T: { size: 16 }\n";
  CHECK(only_error(type) == "t.yaml:3:3: duplicate type 'T'; first declared at 2:3");
  const char* field = R"(types:
  T:
    fields:
      - { name: x, type: u8 }
      - { name: x, type: u16 }
)";
  CHECK(only_error(field) ==
        "t.yaml:5:17: duplicate field 'x' in type 'T'; first declared at 4:17");
  const char* topic = R"(types: { T: { size: 8 } }
topics:
  - { name: a, type: T }
  - { name: a, type: T }
)";
  CHECK(only_error(topic) == "t.yaml:4:13: duplicate topic 'a'; first declared at 3:13");
}

TEST_CASE("a reserved or malformed type name is refused") {
  const char* y = "types:\n  u8: { size: 1 }\n";
  CHECK(only_error(y) ==
        "t.yaml:2:3: type name 'u8' is reserved (a primitive or 'bytes'); expected another name");
  const char* bad = "types:\n  \"9lives\": { size: 1 }\n";
  CHECK(only_error(bad).starts_with("t.yaml:2:3: invalid type name '9lives'"));
}

TEST_CASE("a recursive type is reported at the field that closes the cycle") {
  const char* y = "types:\n  Node:\n    fields:\n      - { name: next, type: Node }\n";
  CHECK(only_error(y) ==
        "t.yaml:4:29: recursive type: 'Node' contains itself (Node.next -> "
        "Node); expected types that do not nest themselves (a type cannot hold "
        "itself by value)");
}

TEST_CASE("a type over 1 GiB is reported at the field that makes it so") {
  const char* y = "types:\n  T:\n    fields:\n      - { name: data, type: \"u8[2147483648]\" }\n";
  CHECK(only_error(y) == at(y, "\"u8") +
                             "field 'data' of type 'T' (u8[2147483648]) is over the 1 GiB limit; "
                             "expected a smaller array");
}

TEST_CASE("opaque types need a size that is a multiple of a power-of-two alignment") {
  const char* uneven = "types:\n  Blob: { size: 100, align: 8 }\n";
  CHECK(only_error(uneven) == at(uneven, "100") +
                                  "size 100 of type 'Blob' is not a multiple of its alignment 8; "
                                  "expected a multiple of 8 (as sizeof always is in C++)");
  const char* align = "types:\n  Blob: { size: 96, align: 3 }\n";
  CHECK(only_error(align).starts_with(at(align, "3") +
                                      "alignment 3 of type 'Blob' is not a power of two"));
  const char* both = "types:\n  Blob: { fields: [{ name: x, type: u8 }], size: 8 }\n";
  CHECK(
      only_error(both).starts_with(at(both, "size") + "type 'Blob' has both 'fields' and 'size'"));
  const char* neither = "types:\n  Blob: {}\n";
  CHECK(only_error(neither).starts_with("t.yaml:2:3: type 'Blob' has neither 'fields' nor 'size'"));
  const char* empty = "types:\n  Blob: { fields: [] }\n";
  CHECK(only_error(empty).starts_with("t.yaml:2:3: type 'Blob' has no fields"));
  const char* struct_align = "types:\n  T: { fields: [{ name: x, type: u8 }], align: 8 }\n";
  CHECK(
      only_error(struct_align)
          .starts_with(at(struct_align, "align") + "'align' in type 'T' is only for opaque types"));
}

TEST_CASE("a sample larger than every pool size class is reported at its type") {
  const char* y = R"(pool: [{ chunk_size: 4KiB, count: 8 }]
types:
  Frame: { fields: [{ name: pixels, type: "u8[8192]" }] }
topics:
  - { name: camera/frames, type: Frame }
  - { name: logs, type: bytes, max_size: 64KiB }
)";
  const auto d = check_string(y, "t.yaml");
  REQUIRE(d.size() == 2);
  CHECK(d[0].to_string() == at(y, "Frame", 2) +
                                "the 8192-byte samples of topic 'camera/frames' are larger than "
                                "every pool size class (largest 4 KiB); expected a pool class with "
                                "chunk_size of at least 8192 bytes");
  CHECK(d[1].to_string() == at(y, "64KiB") +
                                "the 65536-byte samples of topic 'logs' are larger than every pool "
                                "size class (largest 4 KiB); expected a pool class with chunk_size "
                                "of at least 65536 bytes");
}

TEST_CASE("max_size is required on bytes topics and refused on typed ones") {
  const char* missing = "topics: [{ name: logs, type: bytes }]\n";
  CHECK(only_error(missing) == at(missing, "bytes") +
                                   "bytes topic 'logs' has no 'max_size'; expected e.g. max_size: "
                                   "64KiB");
  const char* typed = "types: { T: { size: 8 } }\ntopics: [{ name: a, type: T, max_size: 1KiB }]\n";
  CHECK(only_error(typed) ==
        at(typed, "max_size") +
            "'max_size' is only for bytes topics, and topic 'a' has type 'T'; "
            "expected no 'max_size' (the type fixes the size), or type: bytes");
  const char* bad = "topics: [{ name: logs, type: bytes, max_size: 4KB }]\n";
  CHECK(only_error(bad) == at(bad, "4KB") +
                               "invalid size '4KB' for 'max_size'; expected a size in bytes, as an "
                               "integer or with B, KiB, MiB or GiB (e.g. 4096, 64KiB, 4MiB)");
  const char* zero = "topics: [{ name: logs, type: bytes, max_size: 0 }]\n";
  CHECK(only_error(zero) ==
        at(zero, "0 }") + "'max_size' is 0, out of range; expected 1 B to 1 GiB");
}

TEST_CASE("a YAML syntax error is reported at yaml-cpp's position") {
  const char* indent = "domain: demo\ntopics:\n  - name: a\n   type: T\n";
  CHECK(only_error(indent) ==
        "t.yaml:4:4: YAML syntax error: end of sequence not found; expected well-formed YAML "
        "(check brackets, quotes, colons and indentation)");
  // yaml-cpp 0.7's LoadAll would loop forever, allocating, on these.
  CHECK(only_error(",") ==
        "t.yaml:1:1: YAML syntax error: unexpected ','; expected well-formed "
        "YAML (check brackets, quotes, colons and indentation)");
  CHECK(only_error(",domain: demo\n").starts_with("t.yaml:1:1: YAML syntax error: unexpected ','"));
  CHECK(only_error(std::string(5000, '['))
            .starts_with("t.yaml:1:1: YAML syntax error: nesting deeper than"));
  const char* unclosed = "domain: demo\ntopics: [a, b\n";
  CHECK(only_error(unclosed).starts_with(
      "t.yaml:3:1: YAML syntax error: end of sequence flow not found"));
}

TEST_CASE("an empty file or a top level that is not a map is refused") {
  for (const char* empty : {"", "\n\n", "# only a comment\n", "~\n"}) {
    CAPTURE(empty);
    CHECK(only_error(empty) ==
          "t.yaml:1:1: the configuration is empty; expected a map with keys "
          "such as 'types' and 'topics'");
  }
  CHECK(only_error("- a\n- b\n") ==
        "t.yaml:1:1: the top level is a list; expected a map with keys domain, liveness, pool, "
        "defaults, strict, types, topics, limits, services, include");
  CHECK(only_error("\nhello\n").starts_with("t.yaml:2:1: the top level is a single value"));
  CHECK(only_error("domain: a\n---\ndomain: b\n") ==
        "t.yaml:3:1: a second YAML document ('---'); expected one document per configuration file");
}

TEST_CASE("domain and topic names are checked") {
  const char* domain = "domain: \"my domain\"\n";
  CHECK(only_error(domain) ==
        "t.yaml:1:9: invalid domain 'my domain'; expected 1 to 32 letters, digits, '_' or '-'");
  const char* topic = "types: { T: { size: 8 } }\ntopics: [{ name: /robot, type: T }]\n";
  CHECK(only_error(topic) == at(topic, "/robot") +
                                 "invalid topic name '/robot'; expected 1 to 128 characters of "
                                 "A-Z a-z 0-9 _ / . -, without a leading, trailing or double '/'");
}

TEST_CASE("a topic without name or type says what it needs") {
  const char* no_name = "types: { T: { size: 8 } }\ntopics:\n  - { type: T }\n";
  CHECK(only_error(no_name) == "t.yaml:3:5: topic 1 has no 'name'; expected e.g. name: robot/pose");
  const char* no_type = "topics:\n  - name: a\n    capacity: 8\n";
  CHECK(only_error(no_type) ==
        "t.yaml:2:5: topic 'a' has no 'type'; expected a type declared under 'types', or 'bytes'");
}

TEST_CASE("the liveness timeout must exceed the heartbeat") {
  const char* y = "liveness: { heartbeat_ms: 100, timeout_ms: 50 }\n";
  CHECK(only_error(y) == at(y, "50") +
                             "timeout_ms 50 is not greater than heartbeat_ms 100; expected a "
                             "timeout of several heartbeats (e.g. 10 x heartbeat_ms)");
  const char* slow = "liveness: { heartbeat_ms: 2000 }\n";
  CHECK(only_error(slow) == at(slow, "2000") +
                                "timeout_ms 1000 (the default) is not greater than heartbeat_ms "
                                "2000; expected a timeout of several heartbeats (e.g. 10 x "
                                "heartbeat_ms)");
}

TEST_CASE("history larger than capacity is refused where it is given") {
  const char* y =
      "types: { T: { size: 8 } }\ntopics: [{ name: a, type: T, capacity: 4, history: 8 }]\n";
  CHECK(only_error(y) == at(y, "8 }", 2) +
                             "history 8 is larger than capacity 4; expected a history of at most "
                             "the capacity (late subscribers get it in their queue)");
  const char* defaults =
      "defaults: { capacity: 2, history: 3 }\ntypes: { T: { size: 8 } }\ntopics: [{ name: a, type: "
      "T }]\n";
  CHECK(
      only_error(defaults).starts_with(at(defaults, "3") + "history 3 is larger than capacity 2"));
}

TEST_CASE("the pool must list distinct, complete size classes") {
  const char* empty = "pool: []\n";
  CHECK(only_error(empty).starts_with("t.yaml:1:7: 'pool' has no size classes"));
  const char* dup =
      "pool:\n  - { chunk_size: 4KiB, count: 1 }\n  - { chunk_size: 4096, count: 2 }\n";
  CHECK(only_error(dup) ==
        "t.yaml:3:19: duplicate pool class with chunk_size 4 KiB; first "
        "declared at 2:19 (expected one class per chunk size: add up the counts)");
  const char* incomplete = "pool:\n  - { chunk_size: 4KiB }\n";
  CHECK(only_error(incomplete) ==
        "t.yaml:2:5: pool class 1 has no 'count'; expected { chunk_size: 4KiB, count: 1024 }");
}

TEST_CASE("allow lists hold names only") {
  const char* y =
      "types: { T: { size: 8 } }\ntopics: [{ name: a, type: T, allow: { publish: [alice, {x: 1}] } "
      "}]\n";
  CHECK(only_error(y) == at(y, "{x") +
                             "wrong type for item 2 of 'publish': got a map; expected a user or "
                             "group name");
  const char* key =
      "types: { T: { size: 8 } }\ntopics: [{ name: a, type: T, allow: { publsh: [] } }]\n";
  CHECK(only_error(key) == at(key, "publsh") +
                               "unknown key 'publsh' in 'allow' of topic 'a'; did you mean "
                               "'publish'?");
}

TEST_CASE("a broken type is reported once, not again by its users") {
  const char* y = R"(types:
  Inner: { fields: [{ name: x, type: nope }] }
  Outer: { fields: [{ name: i, type: Inner }] }
  Broken: { fields: 3 }
topics:
  - { name: a, type: Outer }
  - { name: b, type: Broken }
)";
  const auto d = check_string(y, "t.yaml");
  INFO(all(d));
  REQUIRE(d.size() == 2);
  CHECK(d[0].to_string().starts_with(at(y, "nope") + "unknown field type 'nope'"));
  CHECK(d[1].to_string().starts_with(at(y, "3") + "wrong type for 'fields' of type 'Broken'"));
}

TEST_CASE("check_file reports every problem at once, in source order") {
  const char* y = R"(domain: "bad domain"
defaults: { capacity: 3 }
types:
  Pose:
    fields:
      - { name: x, type: f46 }
topics:
  - { name: a, type: Pose, policy: fast }
  - { name: a, type: bytes, max_size: 1KiB, colour: red }
)";
  const auto d = check_string(y, "t.yaml");
  INFO(all(d));
  REQUIRE(d.size() == 6);
  CHECK(d[0].to_string().starts_with("t.yaml:1:9: invalid domain 'bad domain'"));
  CHECK(d[1].to_string().starts_with(at(y, "3 }") + "capacity 3 is not a power of two"));
  CHECK(d[2].to_string().starts_with(at(y, "f46") + "unknown field type 'f46'"));
  CHECK(d[3].to_string().starts_with(at(y, "fast") + "unknown policy 'fast'"));
  CHECK(
      d[4].to_string().starts_with(at(y, "a,", 2) + "duplicate topic 'a'; first declared at 8:13"));
  CHECK(d[5].to_string().starts_with(at(y, "colour") + "unknown key 'colour' in topic 'a'"));
  for (const auto& diagnostic : d) CHECK(diagnostic.file == "t.yaml");

  try {
    (void)load_string(y, "t.yaml");
    FAIL("load_string accepted it");
  } catch (const ConfigError& e) {
    CHECK(e.diagnostics().size() == 6);
    CHECK(std::string(e.what()) == d[0].to_string());
  }
}

TEST_CASE("random corruptions of the sample give diagnostics, never a crash or a stray exception") {
  std::string demo;
  {
    const auto d = check_file(FERRY_CONFIG_EXAMPLES "/demo.yaml");
    REQUIRE(d.empty());
    std::FILE* f = std::fopen(FERRY_CONFIG_EXAMPLES "/demo.yaml", "rb");
    REQUIRE(f != nullptr);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) demo.append(buffer, n);
    std::fclose(f);
  }
  const std::string_view noise = ":{}[]-\"' \n#&*!|>,09a\t~?%@`";
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;  // fixed seed: failures reproduce
  auto next = [&state](std::size_t bound) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<std::size_t>(state % bound);
  };
  int rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = demo;
    const std::size_t edits = 1 + next(4);
    for (std::size_t e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at_byte = next(text.size());
      switch (next(3)) {
        case 0:
          text[at_byte] = noise[next(noise.size())];
          break;
        case 1:
          text.erase(at_byte, 1 + next(8));
          break;
        default:
          text.insert(at_byte, 1, noise[next(noise.size())]);
      }
    }
    CAPTURE(text);
    std::vector<Diagnostic> diagnostics;
    REQUIRE_NOTHROW(diagnostics = check_string(text, "t.yaml"));
    for (const Diagnostic& d : diagnostics) {
      CHECK(d.line >= 1);
      CHECK(d.column >= 1);
      CHECK(d.message.find("; ") != std::string::npos);  // "what is wrong; what was expected"
    }
    if (!diagnostics.empty()) {
      ++rejected;
      CHECK_THROWS_AS((void)load_string(text, "t.yaml"), ConfigError);
      continue;
    }
    const Config c = load_string(text, "t.yaml");
    for (const Topic& t : c.topics) {
      CHECK(t.sample_size >= 1);
      CHECK((t.is_bytes() || c.type_of(t) != nullptr));
    }
  }
  CHECK(rejected > 1000);  // the corruptions do hit
}
