// What a topic's declaration promises the ports on it (docs/configuration.md,
// docs/concepts/policies.md, docs/cpp-api.md): `defaults:` for what a topic leaves out, the type
// check at port creation (alignment), and `block` towards a full and a draining subscriber.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>

#include "daemon_fixture.hpp"
#include "port_children.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

// Four u32 fields: 16 bytes, alignment 4 in the YAML's C ABI layout.
struct Quad {
  std::uint32_t a, b, c, d;
};
FERRY_TYPE(Quad);

// The same name and size, but two u64 fields: alignment 8.
namespace wide {
struct Quad {
  std::uint64_t a, b;
};
}  // namespace wide
FERRY_TYPE_NAMED(wide::Quad, "Quad");

namespace {

const std::string kQuadType =
    "  Quad:\n"
    "    fields:\n"
    "      - { name: a, type: u32 }\n"
    "      - { name: b, type: u32 }\n"
    "      - { name: c, type: u32 }\n"
    "      - { name: d, type: u32 }\n";

// Publishes n samples on `pub`; returns the last result.
ferry::PublishResult publish_n(ferry::Publisher<Seq>& pub, int n) {
  ferry::PublishResult r;
  for (int i = 0; i < n; ++i) r = pub.publish(make_seq(1, static_cast<std::uint64_t>(i)));
  return r;
}

}  // namespace

TEST_CASE("defaults: apply to declared topics that do not set a key and to undeclared ones") {
  ServedConfig served(
      seq_config("  - { name: plain, type: Seq }\n"
                 "  - { name: own, type: Seq, capacity: 8, policy: drop_oldest, "
                 "max_subscribers: 2 }\n",
                 "defaults: { capacity: 2, policy: drop_new, max_subscribers: 1 }\n"));
  ferry::Node node{"defaults"};
  for (const std::string topic : {"plain", "undeclared"}) {
    CAPTURE(topic);
    auto [pub, sub] = matched_ports<Seq>(node, topic);
    // capacity 2, drop_new: the third sample is refused, the first two kept.
    CHECK(publish_n(pub, 2).delivered == 1);
    const auto third = pub.publish(make_seq(1, 2));
    CHECK(third.dropped == 1);
    CHECK(third.delivered == 0);
    // The subscriber's side attaches its queue on its own thread: wait for it.
    auto first = sub.take(5s);
    REQUIRE(first.has_value());
    CHECK((*first)->seq == 0);
    // max_subscribers: 1.
    CHECK_THROWS_WITH_AS(static_cast<void>(node.subscriber<Seq>(topic)),
                         doctest::Contains("max_subscribers"), ferry::Error);
  }
  // A topic's own keys win over the defaults.
  auto pub = node.publisher<Seq>("own");
  auto sub = node.subscriber<Seq>("own");
  auto second = node.subscriber<Seq>("own");
  REQUIRE(pub.wait_for_subscribers(2, std::chrono::seconds(10)));
  CHECK(publish_n(pub, 8).delivered == 2);
  const auto ninth = pub.publish(make_seq(1, 8));
  CHECK(ninth.overwritten == 2);
  CHECK(ninth.dropped == 0);
  auto oldest = sub.take(5s);
  REQUIRE(oldest.has_value());
  CHECK((*oldest)->seq == 1);  // sample 0 gave way to sample 8
}

TEST_CASE("a port whose type's alignment differs from the declared one is refused naming both") {
  ServedConfig served("types:\n" + kQuadType + "topics:\n  - { name: quads, type: Quad }\n");
  ferry::Node node{"aligner"};
  static_assert(sizeof(wide::Quad) == sizeof(Quad) && alignof(wide::Quad) != alignof(Quad));
  const auto mismatch = doctest::Contains(
      "type mismatch on topic 'quads': the port's type is 'Quad' (size 16, alignment 8) but the "
      "topic's is 'Quad' (size 16, alignment 4)");
  CHECK_THROWS_WITH_AS(static_cast<void>(node.publisher<wide::Quad>("quads")), mismatch,
                       ferry::Error);
  CHECK_THROWS_WITH_AS(static_cast<void>(node.subscriber<wide::Quad>("quads")), mismatch,
                       ferry::Error);
  // The struct laid out as declared is accepted.
  auto [pub, sub] = matched_ports<Quad>(node, "quads");
  CHECK(pub.publish(Quad{1, 2, 3, 4}).delivered == 1);
  auto s = sub.take(5s);
  REQUIRE(s.has_value());
  CHECK((*s)->d == 4);
}

TEST_CASE("block with one full and one draining subscriber: delivered 1, timed_out 1") {
  ServedConfig served(
      seq_config("  - { name: blk, type: Seq, capacity: 1, policy: block, "
                 "block_timeout_ms: 500 }\n"));
  Signal full_ready;
  Signal check_full;
  // Never takes until told: its one slot stays full.
  Child full = subscriber_child<Seq>("full", "blk", full_ready, [&](ferry::Subscriber<Seq>& sub) {
    if (!check_full.wait(20s)) return 1;
    auto s = sub.take(5s);
    if (!s || (*s)->seq != 0) return 2;
    return sub.take() ? 3 : 0;  // sample 1 never reached it
  });
  // Takes everything as it comes.
  Child draining([&] {
    ferry::Node node{"draining"};
    auto sub = node.subscriber<Seq>("blk");
    for (std::uint64_t i = 0; i < 2; ++i) {
      auto s = sub.take(10s);
      if (!s || (*s)->seq != i) return 1;
    }
    return 0;
  });
  REQUIRE(full_ready.wait());
  ferry::Node node{"blocker"};
  auto pub = node.publisher<Seq>("blk");
  REQUIRE(pub.wait_for_subscribers(2, std::chrono::seconds(10)));
  const auto first = pub.publish(make_seq(1, 0));
  CHECK(first.delivered == 2);
  CHECK(first.timed_out == 0);
  const auto second = pub.publish(make_seq(1, 1));
  CHECK(second.delivered == 1);
  CHECK(second.timed_out == 1);
  CHECK(second.dropped == 0);
  CHECK(draining.wait(10s) == 0);
  check_full.raise();
  CHECK(full.wait(10s) == 0);
}
