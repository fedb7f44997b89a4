// Pool sizing from the topics, and the /dev/shm fit check.

#include <doctest/doctest.h>

#include <cerrno>

#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "ferry/config/pool_plan.hpp"

using namespace ferry::config;

namespace {
constexpr std::uint64_t kMiB = 1024 * 1024;

const char* const kTopics = R"(
defaults: { capacity: 4, max_subscribers: 2, max_publishers: 3, max_loans: 1, history: 1 }
types:
  Small: { size: 8 }
  Mid: { size: 100 }
  Edge: { size: 128 }
  Big: { size: 5000 }
topics:
  - { name: small, type: Small }
  - { name: mid, type: Mid }
  - { name: edge, type: Edge, max_publishers: 1 }
  - { name: big, type: Big, capacity: 8 }
  - { name: text, type: bytes, max_size: 1MiB, max_subscribers: 1, max_publishers: 1 }
)";
}  // namespace

TEST_CASE(
    "a topic needs (capacity x max_subscribers + history + max_loans) x max_publishers chunks") {
  Topic t;
  t.name = "robot/cmd";
  t.sample_size = 40;
  t.settings.capacity = 64;
  t.settings.max_subscribers = 8;
  t.settings.history = 1;
  t.settings.max_loans = 4;
  t.settings.max_publishers = 2;
  const TopicDemand d = topic_demand(t);
  CHECK(d.topic == "robot/cmd");
  CHECK(d.sample_size == 40);
  CHECK(d.chunk_size == 64);
  CHECK(d.chunks == (64 * 8 + 1 + 4) * 2);
  CHECK(d.bytes == d.chunks * 64);
}

TEST_CASE("chunk sizes are powers of two of at least 64 bytes holding one sample") {
  Topic t;
  for (const auto& [sample, chunk] : {std::pair<std::uint64_t, std::uint64_t>{1, 64},
                                      {64, 64},
                                      {65, 128},
                                      {3110408, 4 * kMiB},
                                      {4 * kMiB, 4 * kMiB},
                                      {kMaxSampleSize, kMaxSampleSize}}) {
    CAPTURE(sample);
    t.sample_size = sample;
    CHECK(topic_demand(t).chunk_size == chunk);
  }
}

TEST_CASE("a huge demand saturates instead of wrapping around") {
  Topic t;
  t.sample_size = kMaxSampleSize;
  t.settings = {kMaxCapacity,    Policy::Block, 0,        kMaxPublishers,
                kMaxSubscribers, kMaxLoans,     kMaxHeld, kMaxCapacity};
  const TopicDemand d = topic_demand(t);
  CHECK(d.chunks == (std::uint64_t{kMaxCapacity} * kMaxSubscribers + kMaxCapacity + kMaxLoans) *
                        kMaxPublishers);
  CHECK(d.bytes == UINT64_MAX);
  Config c;
  c.topics = {t, t};
  CHECK(plan_pool(c).total_bytes == UINT64_MAX);
}

TEST_CASE("without pool, classes group the topics' demands by chunk size") {
  const Config c = load_string(kTopics, "t.yaml");
  const PoolPlan plan = plan_pool(c);
  CHECK_FALSE(plan.from_config);
  // small: (4x2+1+1)x3 = 30 x 64 B; mid and edge share 128 B: 30 + 10;
  // big: (8x2+1+1)x3 = 54 x 8 KiB; text: (4x1+1+1)x1 = 6 x 1 MiB.
  CHECK(plan.classes == std::vector<PoolClass>{{64, 30}, {128, 40}, {8192, 54}, {kMiB, 6}});
  CHECK(plan.total_bytes == 64 * 30 + 128 * 40 + 8192 * 54 + kMiB * 6);
  REQUIRE(plan.demands.size() == 5);
  CHECK(plan.demands[2].topic == "edge");
  CHECK(plan.demands[2].chunks == 10);
  CHECK(plan.demands[4].bytes == 6 * kMiB);
}

TEST_CASE("with pool, its classes are used as given and the topics' demands still reported") {
  const Config c = load_file(FERRY_CONFIG_EXAMPLES "/demo.yaml");
  const PoolPlan plan = plan_pool(c);
  CHECK(plan.from_config);
  CHECK(plan.classes == c.pool);
  CHECK(plan.total_bytes == 4096 * 1024 + 4 * kMiB * 32);
  REQUIRE(plan.demands.size() == 4);
  CHECK(plan.demands[1].topic == "camera/frames");
  CHECK(plan.demands[1].chunk_size == 4 * kMiB);
  CHECK(plan.demands[1].chunks == (4 * 16 + 0 + 4) * 8);
}

TEST_CASE("a pool that fits in the free space passes the check") {
  const PoolPlan plan = plan_pool(load_string(kTopics, "t.yaml"));
  CHECK(check_pool_fits(plan, plan.total_bytes).has_value());
  CHECK(check_pool_fits(plan, 64 * kMiB).has_value());
}

TEST_CASE("a pool too big for /dev/shm names the topic that needs the most and how much") {
  const PoolPlan plan = plan_pool(load_string(kTopics, "t.yaml"));
  const auto fit = check_pool_fits(plan, 4 * kMiB);
  REQUIRE_FALSE(fit.has_value());
  const PoolFitError& e = fit.error();
  CHECK(e.topic == "text");
  CHECK(e.topic_bytes == 6 * kMiB);
  CHECK(e.pool_bytes == plan.total_bytes);
  CHECK(e.free_bytes == 4 * kMiB);
  CHECK(
      e.message ==
      "the shared-memory pool sized from the topics needs 6740864 bytes (6740864 B) but /dev/shm "
      "has only 4194304 bytes (4 MiB) free; topic 'text' needs the most: 6291456 bytes (6 chunks "
      "of 1 MiB); lower its capacity, max_subscribers, max_publishers, history or max_loans, give "
      "'pool' explicitly, or enlarge /dev/shm");
}

TEST_CASE("an explicit pool too big for /dev/shm says to shrink it") {
  const PoolPlan plan = plan_pool(load_file(FERRY_CONFIG_EXAMPLES "/demo.yaml"));
  const auto fit = check_pool_fits(plan, 64 * kMiB);
  REQUIRE_FALSE(fit.has_value());
  CHECK(fit.error().topic == "camera/frames");
  CHECK(fit.error().topic_bytes == 544 * 4 * kMiB);
  CHECK(fit.error().message.starts_with(
      "the shared-memory pool given by 'pool' needs 138412032 bytes (132 MiB) but /dev/shm has "
      "only 67108864 bytes (64 MiB) free; topic 'camera/frames' needs the most: 2281701376 bytes"));
  CHECK(fit.error().message.ends_with("; shrink 'pool' or enlarge /dev/shm"));
}

TEST_CASE("free_shm_bytes reads the file system and reports a missing one") {
  const auto free = free_shm_bytes("/dev/shm");
  REQUIRE(free.has_value());
  CHECK(*free > 0);
  const auto missing = free_shm_bytes("/nonexistent/shm");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().value() == ENOENT);
}

TEST_CASE("a pool of more than 32 size classes is refused at the 33rd, with its position") {
  std::string y = "pool:\n";
  for (int i = 0; i < 33; ++i)
    y += "  - { chunk_size: " + std::to_string(64 * (i + 1)) + "B, count: 1 }\n";
  y += "types:\n  T: { size: 8 }\ntopics:\n  - { name: t, type: T }\n";
  const auto d = check_string(y, "pool.yaml");
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() ==
        "pool.yaml:34:5: pool class 33 is one too many: the pool has at most 32 size classes; "
        "expected fewer classes (merge near sizes into one)");
  // 32 is accepted.
  y.erase(y.find("  - { chunk_size: 2112B"),
          std::string("  - { chunk_size: 2112B, count: 1 }\n").size());
  CHECK(check_string(y, "pool.yaml").empty());
}
