// Batches between two threads of one process through a real ferryd (the
// TSan suite runs this): a batch producer against a single-sample consumer,
// and single publishes against a batch consumer, on block and drop_oldest.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: block, type: Seq, capacity: 32, policy: block, block_timeout_ms: 10000 }\n"
    "  - { name: oldest, type: Seq, capacity: 32, policy: drop_oldest }\n");

// Publishes `total` samples, in batches of 1..100 or one by one.
void produce(ferry::Publisher<Seq>& pub, std::uint64_t total, bool batches, bool& ok) {
  std::mt19937 rng(1);
  std::vector<Seq> batch(100);
  std::uint64_t seq = 0;
  while (seq < total) {
    const std::size_t n = batches ? std::min<std::uint64_t>(1 + rng() % 100, total - seq) : 1;
    for (std::size_t i = 0; i < n; ++i) batch[i] = make_seq(0, seq++);
    const auto r = batches ? pub.publish_many(std::span(batch.data(), n)) : pub.publish(batch[0]);
    if (r.delivered != n) ok = false;
  }
}

// Takes until `last` arrived (or 5 s pass with nothing); every sample intact
// and after the previous one; `gaps` says whether some may be missing.
void consume(ferry::Subscriber<Seq>& sub, std::uint64_t last, bool batches, bool gaps, bool& ok) {
  std::array<Seq, 64> out{};
  std::mt19937 rng(2);
  std::uint64_t next = 0;
  bool done = false;
  while (!done) {
    std::size_t n = 0;
    if (batches) {
      n = sub.take_many(std::span(out.data(), 1 + rng() % out.size()), 5s).value();
    } else if (auto s = sub.take(5s)) {
      out[0] = **s;
      n = 1;
    }
    if (n == 0) {
      ok = false;
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t seq = out[i].seq;
      if (!intact(out[i]) || seq < next || (!gaps && seq != next)) ok = false;
      next = seq + 1;
      done = seq == last;
    }
  }
}

void run(const char* topic, bool batch_producer, bool gaps) {
  ServedConfig served(kConfig);
  ferry::Node node{"threads"};
  auto pub = node.publisher<Seq>(topic);
  auto sub = node.subscriber<Seq>(topic);
  REQUIRE(eventually([&] { return pub.subscriber_count() == 1 && sub.publisher_count() == 1; }));
  const std::uint64_t total = ferry::test::scaled(200000, 10);
  bool produced = true;
  bool consumed = true;
  std::thread consumer([&] { consume(sub, total - 1, !batch_producer, gaps, consumed); });
  produce(pub, total, batch_producer, produced);
  consumer.join();
  CHECK(produced);
  CHECK(consumed);
}

}  // namespace

TEST_CASE("block: a batch producer against a single-sample consumer thread") {
  run("block", true, false);
}
TEST_CASE("block: a single-sample producer against a batch consumer thread") {
  run("block", false, false);
}
TEST_CASE("drop_oldest: a batch producer against a single-sample consumer thread") {
  run("oldest", true, true);
}
TEST_CASE("drop_oldest: a single-sample producer against a batch consumer thread") {
  run("oldest", false, true);
}
