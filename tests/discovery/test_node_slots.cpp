// Node slots are given again once their process is gone, never before, and
// the log limiter lets one line a second through with a count of the rest.
#include <doctest/doctest.h>

#include <set>

#include "log_limiter.hpp"
#include "node_slots.hpp"

using namespace ferry::discovery;

TEST_CASE("fresh slots go first, then the one free the longest") {
  NodeSlots ids(3);
  for (std::uint16_t expected = 1; expected <= 3; ++expected) CHECK(ids.take() == expected);
  ids.retire(2, 0);
  ids.retire(1, 0);
  CHECK(ids.recycle([](const NodeSlots::Retired&) { return true; }) == 2);
  CHECK(ids.take() == 2);
  CHECK(ids.take() == 1);
}

TEST_CASE("node slots are reused after their process is gone, far past the id space") {
  NodeSlots ids(8);
  std::set<pid_t> running;
  // 100,000 short-lived nodes through 8 slots (the old daemon stopped at 65,535).
  for (int round = 0; round < 100'000; ++round) {
    auto id = ids.take();
    if (!id) {
      CHECK(ids.recycle([&](const NodeSlots::Retired& r) { return !running.contains(r.pid); }) > 0);
      id = ids.take();
    }
    REQUIRE(id.has_value());
    CHECK(*id >= 1);
    CHECK(*id <= 8);
    ids.retire(*id, 5000 + round);
  }
  CHECK(ids.next_fresh() == 9);
}

TEST_CASE("a slot whose process still runs is never given to another node") {
  NodeSlots ids(3);
  const auto a = ids.take();
  const auto b = ids.take();
  const auto c = ids.take();
  REQUIRE((a && b && c));
  ids.retire(*a, 100);  // left, still running
  ids.retire(*b, 200);  // left, gone
  CHECK_FALSE(ids.take().has_value());
  CHECK(ids.recycle([](const NodeSlots::Retired& r) { return r.pid == 200; }) == 1);
  CHECK(ids.take() == b);
  CHECK_FALSE(ids.take().has_value());
  CHECK(ids.retired_count() == 1);
  CHECK(ids.in_use() == 2);
}

TEST_CASE("ids of a previous ferryd are not fresh; its free slots come back through retire") {
  NodeSlots ids(12);
  ids.continue_from(10);
  CHECK(ids.take() == 10);
  CHECK(ids.take() == 11);
  CHECK(ids.take() == 12);
  CHECK_FALSE(ids.take().has_value());
  ids.retire(3, 0);
  CHECK(ids.recycle([](const NodeSlots::Retired&) { return true; }) == 1);
  CHECK(ids.take() == 3);
}

TEST_CASE("a repeated log line goes out once per interval with the count of the others") {
  LogLimiter limiter(std::chrono::seconds(1));
  const auto t0 = LogLimiter::Clock::time_point{} + std::chrono::hours(1);
  std::uint64_t suppressed = 99;
  CHECK(limiter.allow("accept", suppressed, t0));
  CHECK(suppressed == 0);
  for (int i = 0; i < 1000; ++i) {
    CHECK_FALSE(limiter.allow("accept", suppressed, t0 + std::chrono::milliseconds(i % 900)));
  }
  CHECK(limiter.allow("other", suppressed, t0));  // kinds are counted apart
  CHECK(limiter.allow("accept", suppressed, t0 + std::chrono::seconds(1)));
  CHECK(suppressed == 1000);
}
