// The hot path (publish, take, release) allocates nothing: every operator new
// and malloc on the measuring thread is counted while it runs.
#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>

#include "alloc_counter.hpp"
#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace ferry::test;

// One node with a publisher and a subscriber of topic t (Seq, `capacity`,
// `policy`, a 64 B pool class), matched, on a ferryd of its own.
struct OneTopic {
  OneTopic(const char* policy, int capacity)
      : daemon(domain, seq_config("  - { name: t, type: Seq, capacity: " +
                                      std::to_string(capacity) + ", policy: " + policy + " }\n",
                                  "pool:\n  - { chunk_size: 64B, count: 64 }\n")) {
    ferry::test::use_domain_env(domain);
    node.emplace("test");
    pub.emplace(node->publisher<Seq>("t"));
    sub.emplace(node->subscriber<Seq>("t"));
    REQUIRE(
        eventually([&] { return pub->subscriber_count() == 1 && sub->publisher_count() == 1; }));
  }
  TestDomain domain;
  Daemon daemon;
  std::optional<ferry::Node> node;
  std::optional<ferry::Publisher<Seq>> pub;
  std::optional<ferry::Subscriber<Seq>> sub;
};

// `loans`: every other sample is loaned, so it travels pooled and the
// subscriber's shortcut hands it to the general path (take_popped).
static void run_loop(const char* policy, bool loans = false) {
  OneTopic t(policy, 16);
  auto& pub = *t.pub;
  auto& sub = *t.sub;
  // Warm up: the first publish and take pick up the matched queue.
  pub.publish(make_seq(0, 0));
  REQUIRE(sub.take());

  std::uint64_t sum = 0;
  std::uint64_t sent = 0;
  std::size_t counted = 0;
  {
    ferry::test::CountThreadAllocations guard;
    for (std::uint64_t i = 1; i <= 20000; ++i) {
      ferry::PublishResult r;
      if (loans && i % 2 == 0) {
        auto loan = pub.loan();
        if (!loan) break;
        **loan = make_seq(0, i);
        r = pub.publish(std::move(*loan));
      } else {
        r = pub.publish(make_seq(0, i));
      }
      if (r.delivered != 1) break;
      ++sent;
      if (i % 4 == 0) {  // let a few queue up, then drain them
        while (auto s = sub.take()) sum += (*s)->seq;
      }
    }
    counted = ferry::test::thread_allocations();
  }
  CHECK(counted == 0);
  CHECK(sent == 20000);
  CHECK(sum > 0);
}

TEST_CASE("publish, take and release allocate nothing (drop_oldest)") { run_loop("drop_oldest"); }
TEST_CASE("publish, take and release allocate nothing (drop_new)") { run_loop("drop_new"); }
TEST_CASE("publish, take and release allocate nothing (block)") { run_loop("block"); }
TEST_CASE("loaned small samples: publish, take and release allocate nothing (block)") {
  run_loop("block", true);
}

// Batches (publish_many of spans and of loaned batches, take_many) on
// every policy, with a pooled sample
// (a loan) among them so that take_many copies one out of the pool too.
static void run_batches(const char* policy) {
  OneTopic t(policy, 64);
  auto& pub = *t.pub;
  auto& sub = *t.sub;
  std::array<Seq, 48> batch{};
  std::array<Seq, 64> out{};
  pub.publish_many(batch);  // warm up: picks up the matched queue
  REQUIRE(sub.take_many(out) == batch.size());

  std::uint64_t next = 0;
  std::size_t bad = 0;
  std::size_t counted = 0;
  {
    ferry::test::CountThreadAllocations guard;
    for (int round = 0; round < 2000; ++round) {
      if (round % 2 == 0) {
        for (auto& s : batch) s = make_seq(0, next++);
        if (pub.publish_many(batch).delivered != batch.size()) ++bad;
      } else {  // a loaned batch
        auto loaned = pub.loan_many(batch.size());
        if (!loaned) {
          ++bad;
          break;
        }
        for (auto& s : *loaned) s = make_seq(0, next++);
        if (pub.publish_many(std::move(*loaned)).delivered != batch.size()) ++bad;
      }
      if (round % 16 == 0) {
        auto loan = pub.loan();
        if (!loan) break;
        **loan = make_seq(0, next++);
        if (pub.publish(std::move(*loan)).delivered != 1) ++bad;
      }
      std::size_t taken = 0;
      while (const std::size_t n = sub.take_many(out).value()) taken += n;
      if (taken != batch.size() + (round % 16 == 0 ? 1 : 0)) ++bad;
    }
    counted = ferry::test::thread_allocations();
  }
  CHECK(counted == 0);
  CHECK(bad == 0);
}

TEST_CASE("publish_many, loan_many and take_many allocate nothing (block)") {
  run_batches("block");
}
TEST_CASE("publish_many, loan_many and take_many allocate nothing (drop_new)") {
  run_batches("drop_new");
}
TEST_CASE("publish_many, loan_many and take_many allocate nothing (drop_oldest)") {
  run_batches("drop_oldest");
}

// Services (docs/services.md): send, take_request, respond and take, once
// the server knows its client, allocate nothing either.
TEST_CASE("call and respond allocate nothing") {
  ServedConfig served(seq_config("  - { name: t, type: Seq }\n",
                                 "services:\n"
                                 "  - { name: svc, request: Seq, response: Seq, capacity: 8 }\n"));
  ferry::Node node{"test"};
  auto server = node.server<Seq, Seq>("svc");
  auto client = node.client<Seq, Seq>("svc");
  REQUIRE(client.wait_for_server(std::chrono::seconds(5)));
  // Warm up: the server makes its way back to this client at its first call.
  {
    auto p = client.send(make_seq(1, 0));
    REQUIRE(p);
    auto q = server.take_request(std::chrono::seconds(5));
    REQUIRE(q);
    q->respond(**q);
    REQUIRE(p->take(std::chrono::seconds(5)));
  }
  std::uint64_t answered = 0;
  std::size_t counted = 0;
  {
    ferry::test::CountThreadAllocations guard;
    for (std::uint64_t i = 1; i <= 20000; ++i) {
      auto p = client.send(make_seq(1, i));
      if (!p) break;
      auto q = server.take_request();
      if (!q) break;
      Seq answer = **q;
      answer.seq += 1;
      q->respond(answer);
      auto r = p->take(std::chrono::seconds(1));
      if (!r || (*r)->seq != i + 1) break;
      ++answered;
    }
    counted = ferry::test::thread_allocations();
  }
  CHECK(counted == 0);
  CHECK(answered == 20000);
}
