// Loading valid configurations: values, defaults, sizes, names, files.

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/names.hpp"
#include "ferry/config/policy.hpp"
#include "ferry/config/units.hpp"

using namespace ferry::config;

TEST_CASE("the design's sample configuration loads with the right values") {
  const Config c = load_file(FERRY_CONFIG_EXAMPLES "/demo.yaml");
  CHECK(c.source == FERRY_CONFIG_EXAMPLES "/demo.yaml");
  CHECK(c.domain == "demo");
  CHECK(c.liveness.heartbeat_ms == 100);
  CHECK(c.liveness.timeout_ms == 1000);
  CHECK(c.pool == std::vector<PoolClass>{{4096, 1024}, {4 * 1024 * 1024, 32}});
  CHECK(c.defaults.capacity == 64);
  CHECK(c.defaults.policy == Policy::DropOldest);
  CHECK(c.defaults.block_timeout_ms == 1000);
  CHECK_FALSE(c.strict);
  CHECK(c.schema.types().size() == 3);
  CHECK(c.schema.find("Blob")->size == 256);
  REQUIRE(c.topics.size() == 4);

  const Topic& pose = c.topics[0];
  CHECK(pose.name == "robot/pose");
  CHECK(pose.type == "Pose");
  CHECK(c.type_of(pose) == c.schema.find("Pose"));
  CHECK(pose.sample_size == 40);
  CHECK(pose.sample_align == 8);
  CHECK(pose.settings.capacity == 16);
  CHECK(pose.settings.policy == Policy::DropOldest);
  CHECK(pose.pos == SourcePos{22, 5});

  const Topic& frames = c.topics[1];
  CHECK(frames.sample_size == 3110408);
  CHECK(frames.settings.capacity == 4);

  const Topic& cmd = *c.find_topic("robot/cmd");
  CHECK(cmd.settings.policy == Policy::Block);
  CHECK(cmd.settings.block_timeout_ms == 500);
  CHECK(cmd.settings.max_publishers == 1);
  CHECK(cmd.settings.max_subscribers == 8);
  CHECK(cmd.settings.history == 1);
  CHECK(cmd.settings.capacity == 64);  // from defaults
  CHECK(cmd.settings.max_loans == 4);
  CHECK(cmd.settings.max_held == 4);

  const Topic& logs = *c.find_topic("logs/text");
  CHECK(logs.is_bytes());
  CHECK_FALSE(logs.type_index.has_value());
  CHECK(c.type_of(logs) == nullptr);
  CHECK(logs.sample_size == 64 * 1024);
  CHECK(logs.settings.policy == Policy::DropNew);
  CHECK_FALSE(logs.allow.publish.has_value());
  CHECK(c.find_topic("nope") == nullptr);
}

TEST_CASE("omitted keys take the documented defaults") {
  const Config c = load_file(FERRY_CONFIG_EXAMPLES "/minimal.yaml");
  CHECK_FALSE(c.domain.has_value());
  CHECK(c.liveness.heartbeat_ms == 100);
  CHECK(c.liveness.timeout_ms == 1000);
  CHECK(c.pool.empty());
  CHECK_FALSE(c.strict);
  REQUIRE(c.topics.size() == 1);
  const TopicSettings& s = c.topics[0].settings;
  CHECK(s.capacity == 64);
  CHECK(s.policy == Policy::DropOldest);
  CHECK(s.block_timeout_ms == 1000);
  CHECK(s.max_publishers == 8);
  CHECK(s.max_subscribers == 16);
  CHECK(s.max_loans == 4);
  CHECK(s.max_held == 4);
  CHECK(s.history == 0);
  CHECK(s == TopicSettings{});
  CHECK(c.defaults == TopicSettings{});
}

TEST_CASE("an empty map is a valid configuration") {
  const Config c = load_string("{}", "t.yaml");
  CHECK(c.topics.empty());
  CHECK(c.schema.types().empty());
}

TEST_CASE("a topic's omitted settings come from defaults, its own ones win") {
  const Config c = load_string(R"(
defaults: { capacity: 8, policy: block, block_timeout_ms: 20, max_publishers: 2,
            max_subscribers: 3, max_loans: 5, max_held: 6, history: 7 }
strict: true
types: { T: { size: 8 } }
topics:
  - { name: a, type: T }
  - { name: b, type: T, capacity: 16, policy: drop_new, max_held: 1 }
)",
                               "t.yaml");
  CHECK(c.strict);
  const TopicSettings& a = c.topics.at(0).settings;
  CHECK(a == c.defaults);
  CHECK(a.capacity == 8);
  CHECK(a.policy == Policy::Block);
  CHECK(a.block_timeout_ms == 20);
  CHECK(a.max_publishers == 2);
  CHECK(a.max_subscribers == 3);
  CHECK(a.max_loans == 5);
  CHECK(a.max_held == 6);
  CHECK(a.history == 7);
  const TopicSettings& b = c.topics.at(1).settings;
  CHECK(b.capacity == 16);
  CHECK(b.policy == Policy::DropNew);
  CHECK(b.max_held == 1);
  CHECK(b.max_loans == 5);
}

TEST_CASE("sizes accept plain integers and B, KiB, MiB, GiB suffixes") {
  CHECK(parse_size("0") == 0);
  CHECK(parse_size("4096") == 4096);
  CHECK(parse_size("100B") == 100);
  CHECK(parse_size("64KiB") == 64 * 1024);
  CHECK(parse_size("4 MiB") == 4 * 1024 * 1024);
  CHECK(parse_size("1GiB") == 1024 * 1024 * 1024);
  CHECK(parse_size("17179869184GiB") == std::nullopt);  // 2^64: overflow
  CHECK(parse_size("18446744073709551616") == std::nullopt);
  for (const char* bad :
       {"", "KiB", "4KB", "4k", "4kib", "4.5MiB", "-1", "4  KiB", "4KiB ", " 4"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_size(bad).has_value());
  }
  const Config c = load_string(R"(
pool:
  - { chunk_size: 64B, count: 1 }
  - { chunk_size: 2KiB, count: 1 }
  - { chunk_size: "3 MiB", count: 1 }
  - { chunk_size: 1GiB, count: 1 }
  - { chunk_size: 100, count: 1 }
)",
                               "t.yaml");
  CHECK(c.pool == std::vector<PoolClass>{{64, 1}, {100, 1}, {2048, 1}, {3 << 20, 1}, {1 << 30, 1}});
}

TEST_CASE("sizes print in the largest exact unit") {
  CHECK(format_size(0) == "0 B");
  CHECK(format_size(100) == "100 B");
  CHECK(format_size(4096) == "4 KiB");
  CHECK(format_size(3110408) == "3110408 B");
  CHECK(format_size(6 << 20) == "6 MiB");
  CHECK(format_size(std::uint64_t{3} << 30) == "3 GiB");
}

TEST_CASE("policies print and parse with their YAML spelling") {
  CHECK(to_string(Policy::Block) == "block");
  CHECK(to_string(Policy::DropNew) == "drop_new");
  CHECK(to_string(Policy::DropOldest) == "drop_oldest");
  for (const Policy p : {Policy::Block, Policy::DropNew, Policy::DropOldest})
    CHECK(parse_policy(to_string(p)) == p);
  CHECK_FALSE(parse_policy("Block").has_value());
  CHECK_FALSE(parse_policy("drop-new").has_value());
  CHECK(kPolicyList == "block, drop_new, drop_oldest");
}

TEST_CASE("topic names are 1 to 128 of [A-Za-z0-9_/.-] without empty path segments") {
  CHECK(is_valid_topic_name("robot/pose"));
  CHECK(is_valid_topic_name("a.b-c_D/9"));
  CHECK(is_valid_topic_name(std::string(kMaxTopicNameLength, 'x')));
  CHECK_FALSE(is_valid_topic_name(std::string(kMaxTopicNameLength + 1, 'x')));
  for (const char* bad : {"", "/robot", "robot/", "robot//pose", "robot pose", "robot:pose", "é"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_valid_topic_name(bad));
  }
}

TEST_CASE("domain, type and field names follow their rules") {
  CHECK(is_valid_domain_name("robot_2-a"));
  CHECK_FALSE(is_valid_domain_name(std::string(33, 'a')));
  CHECK_FALSE(is_valid_domain_name("a.b"));
  CHECK(is_valid_type_name("Pose"));
  CHECK(is_valid_type_name("camera/Frame"));
  CHECK(is_valid_type_name("geo::Pose"));
  CHECK_FALSE(is_valid_type_name("9lives"));
  CHECK_FALSE(is_valid_type_name("Pose[2]"));
  CHECK(is_reserved_type_name("u8"));
  CHECK(is_reserved_type_name("bytes"));
  CHECK(is_reserved_type_name("char"));
  CHECK(is_valid_field_name("stamp_ns"));
  CHECK(is_valid_field_name("_x1"));
  CHECK_FALSE(is_valid_field_name("x-y"));
  CHECK_FALSE(is_valid_field_name("1x"));
}

TEST_CASE("allow lists keep who may publish and subscribe") {
  const Config c = load_string(R"(
types: { T: { size: 8 } }
topics:
  - name: a
    type: T
    allow: { publish: [alice, 1000], subscribe: [] }
  - { name: b, type: T, allow: { subscribe: [robots] } }
)",
                               "t.yaml");
  const Allow& a = c.topics.at(0).allow;
  REQUIRE(a.publish.has_value());
  CHECK(*a.publish == std::vector<std::string>{"alice", "1000"});
  REQUIRE(a.subscribe.has_value());
  CHECK(a.subscribe->empty());
  const Allow& b = c.topics.at(1).allow;
  CHECK_FALSE(b.publish.has_value());
  CHECK(*b.subscribe == std::vector<std::string>{"robots"});
}

TEST_CASE("a topic whose sample is small needs no pool class") {
  const Config c = load_string(R"(
pool: [{ chunk_size: 64, count: 8 }]
types: { Small: { size: 4KiB } }
topics: [{ name: a, type: Small }, { name: b, type: bytes, max_size: 100 }]
)",
                               "t.yaml");
  CHECK(c.topics.size() == 2);
}

TEST_CASE("load_file names the file in its messages and check_file of a valid file is empty") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ferry-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "bad.yaml";
  std::ofstream(path) << "topics:\n  - { name: a, type: Nope }\n";
  try {
    (void)load_file(path);
    FAIL("load_file accepted an undeclared type");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == path.string() +
                                       ":2:22: undeclared type 'Nope' for topic 'a'; expected a "
                                       "type declared under 'types', or 'bytes'");
    CHECK(e.first().file == path.string());
  }
  CHECK(check_file(FERRY_CONFIG_EXAMPLES "/demo.yaml").empty());
  CHECK(check_file(FERRY_CONFIG_EXAMPLES "/minimal.yaml").empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a file that cannot be read is an error without position") {
  const std::string missing = "/nonexistent/ferry.yaml";
  const auto diagnostics = check_file(missing);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].line == 0);
  CHECK(diagnostics[0].to_string() ==
        missing + ": cannot read: No such file or directory; expected a readable YAML file");
  CHECK_THROWS_AS((void)load_file(missing), ConfigError);
  const auto dir = check_file("/");
  REQUIRE(dir.size() == 1);
  CHECK(dir[0].to_string() == "/: is a directory, not a regular file; expected a YAML file");
}
