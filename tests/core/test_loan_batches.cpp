// Loaned batches (Publisher::loan_many, docs/batches.md) across processes
// through a real ferryd: samples that fit a slot, written in the
// publisher's batch buffer, arrive once each and in order mixed with every
// other way to publish; pooled samples travel one chunk each, zero copy,
// all or nothing at loan time, and come back to the pool, also from a
// publisher killed while it held a batch; the limits are error values.
#include <doctest/doctest.h>
#include <signal.h>

#include <array>
#include <chrono>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "daemon_fixture.hpp"
#include "pool_probe.hpp"
#include "port_children.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

// Larger than a ring slot (4 KiB): every sample is a pool chunk.
struct Blob {
  std::uint64_t seq;
  std::uint8_t bytes[8184];
};
FERRY_TYPE(Blob);

namespace {

enum : int { kOk = 0, kNoMatch = 10, kLost = 11, kOrder = 12, kTorn = 13, kCount = 14, kLoan = 15 };

const std::string kBlobType =
    "  Blob:\n"
    "    fields:\n"
    "      - { name: seq, type: u64 }\n"
    "      - { name: bytes, type: \"u8[8184]\" }\n";

void fill(Blob& b, std::uint64_t seq) {
  b.seq = seq;
  std::memset(b.bytes, static_cast<int>(seq & 0xff), sizeof b.bytes);
}
bool intact(const Blob& b) {
  const auto mark = static_cast<std::uint8_t>(b.seq & 0xff);
  return b.bytes[0] == mark && b.bytes[sizeof b.bytes / 2] == mark &&
         b.bytes[sizeof b.bytes - 1] == mark;
}

template <class T>
concept can_loan_many = requires(ferry::Publisher<T>& p) {
  p.loan_many(1);
};
static_assert(can_loan_many<Seq> && can_loan_many<Blob> && !can_loan_many<ferry::Bytes>);

}  // namespace

TEST_CASE(
    "loaned batches mixed with publish_many, loans and single publishes reach two subscriber "
    "processes once each, in order") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 256, policy: block, "
                 "block_timeout_ms: 10000 }\n"));
  const std::uint64_t total = ferry::test::scaled(2'000'000, 10);
  auto subscriber = [total] {
    ferry::Node node{"reader"};
    auto sub = node.subscriber<Seq>("t");
    std::vector<Seq> buf(300);
    std::uint64_t next = 0;
    while (next < total) {
      const std::size_t n = sub.take_many(std::span(buf), 10s).value();
      if (n == 0) return int{kLost};
      for (std::size_t i = 0; i < n; ++i) {
        if (!intact(buf[i])) return int{kTorn};
        if (buf[i].seq != next++) return int{kOrder};
      }
    }
    return sub.take(50ms) ? int{kCount} : int{kOk};
  };
  Child a(subscriber);
  Child b(subscriber);
  Child pub([total] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Seq>("t");
    if (!publisher.wait_for_subscribers(2, 10s)) return int{kNoMatch};
    if (publisher.loan_many_capacity() != 256) return int{kLoan};
    std::mt19937 rng(5);
    std::vector<Seq> span(256);
    std::uint64_t seq = 0;
    while (seq < total) {
      const std::size_t n = std::min<std::uint64_t>(1 + rng() % 256, total - seq);
      ferry::PublishResult r;
      switch (rng() % 4) {
        case 0: {  // a loaned batch, written through operator[]
          auto batch = publisher.loan_many(n);
          if (!batch || batch->size() != n || batch->data() == nullptr) return int{kLoan};
          for (std::size_t i = 0; i < n; ++i) (*batch)[i] = make_seq(0, seq++);
          r = publisher.publish_many(std::move(*batch));
          break;
        }
        case 1: {  // a loaned batch, written through its iterators
          auto batch = publisher.loan_many(n);
          if (!batch) return int{kLoan};
          for (Seq& s : *batch) s = make_seq(0, seq++);
          r = publisher.publish_many(std::move(*batch));
          break;
        }
        case 2:
          for (std::size_t i = 0; i < n; ++i) span[i] = make_seq(0, seq++);
          r = publisher.publish_many(std::span<const Seq>(span.data(), n));
          break;
        default: {  // one by one, every other a loan
          for (std::size_t i = 0; i < n; ++i) {
            ferry::PublishResult one;
            if (i % 2 == 0) {
              auto loan = publisher.loan();
              if (!loan) return int{kLoan};
              **loan = make_seq(0, seq++);
              one = publisher.publish(std::move(*loan));
            } else {
              one = publisher.publish(make_seq(0, seq++));
            }
            if (one.delivered != 2) return int{kLost};
          }
          r.delivered = static_cast<std::uint32_t>(2 * n);
        }
      }
      if (r.delivered != 2 * n || r.timed_out != 0 || r.dropped != 0 || r.error) return int{kLost};
    }
    return int{kOk};
  });
  CHECK(pub.wait(600s) == kOk);
  CHECK(a.wait(600s) == kOk);
  CHECK(b.wait(600s) == kOk);
}

TEST_CASE("a loaned batch larger than a drop_oldest queue keeps the newest capacity samples") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 16, policy: drop_oldest }\n"));
  Signal ready;
  Signal published;
  Child sub = subscriber_child<Seq>("sub", "t", ready, [&](ferry::Subscriber<Seq>& subscriber) {
    if (!published.wait(20s)) return int{kLost};
    std::array<Seq, 32> out{};
    const std::size_t n = subscriber.take_many(std::span(out), 10s).value();
    if (n != 16) return int{kCount};
    for (std::size_t i = 0; i < n; ++i)
      if (out[i].seq != 4 + i || !intact(out[i])) return int{kOrder};
    return int{kOk};
  });
  REQUIRE(ready.wait());
  ferry::Node node{"pub"};
  auto pub = node.publisher<Seq>("t");
  REQUIRE(pub.wait_for_subscribers(1, 10s));
  auto four = pub.loan_many(4);
  REQUIRE(four);
  for (std::size_t i = 0; i < 4; ++i) (*four)[i] = make_seq(0, i);
  auto r = pub.publish_many(std::move(*four));
  CHECK(r.delivered == 4);
  auto sixteen = pub.loan_many(16);
  REQUIRE(sixteen);
  for (std::size_t i = 0; i < 16; ++i) (*sixteen)[i] = make_seq(0, 4 + i);
  r = pub.publish_many(std::move(*sixteen));
  CHECK(r.delivered == 16);
  CHECK(r.overwritten == 4);
  CHECK(r.dropped == 0);
  published.raise();
  CHECK(sub.wait() == kOk);
}

TEST_CASE("loan_many's limits are error values, and a batch given back can be loaned again") {
  ServedConfig served(
      seq_config("  - { name: t, type: Seq, capacity: 16, policy: block, max_loans: 2 }\n"));
  ferry::Node node{"n"};
  auto [pub, sub] = matched_ports<Seq>(node, "t");
  CHECK(pub.loan_many_capacity() == 16);
  auto too_many = pub.loan_many(17);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error() == ferry::ErrorCode::InvalidArgument);

  auto batch = pub.loan_many(16);
  REQUIRE(batch);
  CHECK(batch->size() == 16);
  // One batch at a time; it counts as one loan toward max_loans (2).
  auto second = pub.loan_many(1);
  REQUIRE_FALSE(second);
  CHECK(second.error() == ferry::ErrorCode::TooManyLoans);
  {
    auto single = pub.loan();
    REQUIRE(single);
    auto third = pub.loan();
    REQUIRE_FALSE(third);
    CHECK(third.error() == ferry::ErrorCode::TooManyLoans);
  }
  // Destroying an unpublished batch gives it back, with its loan.
  batch = pub.loan_many(0);  // the old batch goes back; the new one is empty
  REQUIRE(batch);
  CHECK(batch->empty());
  auto again = pub.loan_many(3);
  REQUIRE(again);
  CHECK(pub.loan());  // and a single loan besides (the temporary one is returned at once)

  // An empty batch publishes nothing and uses no sequence number.
  auto r = pub.publish_many(std::move(*batch));
  CHECK(r.delivered == 0);
  CHECK(!r.error);
  for (std::size_t i = 0; i < 3; ++i) (*again)[i] = make_seq(0, 100 + i);
  again->shrink(2);  // the third is not sent
  r = pub.publish_many(std::move(*again));
  CHECK(r.delivered == 2);
  for (std::uint64_t i = 0; i < 2; ++i) {
    auto s = sub.take(10s);
    REQUIRE(s);
    CHECK((*s)->seq == 100 + i);
    CHECK(s->info().sequence == i);  // one per sample, from the port's first
  }
  // A moved-from batch and another publisher's batch are refused; the
  // foreign one goes back to its own publisher.
  r = pub.publish_many(std::move(*again));
  CHECK(r.error == ferry::ErrorCode::InvalidArgument);
  auto other = node.publisher<Seq>("t");
  auto foreign = other.loan_many(2);
  REQUIRE(foreign);
  r = pub.publish_many(std::move(*foreign));
  CHECK(r.error == ferry::ErrorCode::InvalidArgument);
  CHECK(r.delivered == 0);
  CHECK(other.loan_many(2));
  CHECK_FALSE(sub.take());
}

TEST_CASE(
    "a loaned batch of samples larger than a slot travels one chunk each, in order, and every "
    "chunk comes back") {
  ServedConfig served(
      seq_config("  - { name: blobs, type: Blob, capacity: 4, policy: block, max_loans: 3 }\n",
                 kBlobType + "pool:\n  - { chunk_size: 16KiB, count: 32 }\n"));
  constexpr std::uint64_t kBatches = 200;
  Child sub([] {
    ferry::Node node{"reader"};
    auto subscriber = node.subscriber<Blob>("blobs");
    for (std::uint64_t next = 0; next < 3 * kBatches; ++next) {
      auto s = subscriber.take(10s);
      if (!s) return int{kLost};
      if ((*s)->seq != next || s->info().sequence != next) return int{kOrder};
      if (!intact(**s)) return int{kTorn};
    }
    return subscriber.take(50ms) ? int{kCount} : int{kOk};
  });
  Child pub([] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Blob>("blobs");
    if (!publisher.wait_for_subscribers(1, 10s)) return int{kNoMatch};
    if (publisher.loan_many_capacity() != 3) return int{kLoan};
    auto over = publisher.loan_many(4);  // more than max_loans
    if (over || over.error() != ferry::ErrorCode::InvalidArgument) return int{kLoan};
    std::uint64_t seq = 0;
    for (std::uint64_t b = 0; b < kBatches; ++b) {
      auto batch = publisher.loan_many(3);
      if (!batch || batch->data() != nullptr) return int{kLoan};  // chunks, not one array
      // The chunks are distinct: zero copy, each sample its own.
      if (&(*batch)[0] == &(*batch)[1] || &(*batch)[1] == &(*batch)[2]) return int{kLoan};
      for (Blob& blob : *batch) fill(blob, seq++);
      const auto r = publisher.publish_many(std::move(*batch));
      if (r.delivered != 3 || r.dropped != 0 || r.timed_out != 0) return int{kLost};
    }
    // A single loan out leaves room for two more: a batch of 3 is refused.
    auto single = publisher.loan();
    if (!single) return int{kLoan};
    auto refused = publisher.loan_many(3);
    if (refused || refused.error() != ferry::ErrorCode::TooManyLoans) return int{kLoan};
    return publisher.loan_many(2) ? int{kOk} : int{kLoan};
  });
  CHECK(pub.wait(120s) == kOk);
  CHECK(sub.wait(120s) == kOk);
  CHECK(ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f); }));
}

TEST_CASE("a pooled loan_many the pool cannot fill loans nothing") {
  ServedConfig served(
      seq_config("  - { name: blobs, type: Blob, capacity: 4, policy: block, max_loans: 8 }\n",
                 kBlobType + "pool:\n  - { chunk_size: 16KiB, count: 3 }\n"));
  ferry::Node node{"n"};
  auto pub = node.publisher<Blob>("blobs");
  auto all = pub.loan_many(4);
  REQUIRE_FALSE(all);
  CHECK(all.error() == ferry::ErrorCode::PoolExhausted);
  // Nothing was kept: the whole pool is there for the next batch.
  CHECK(ferry::test::pool_count(served.domain.name()).free == 3);
  {
    auto three = pub.loan_many(3);
    REQUIRE(three);
    CHECK(ferry::test::pool_count(served.domain.name()).free == 0);
  }  // an unpublished batch gives its chunks back
  CHECK(ferry::test::pool_count(served.domain.name()).free == 3);
  // shrink() keeps the first samples and gives the other chunks back.
  auto three = pub.loan_many(3);
  REQUIRE(three);
  three->shrink(5);  // more than it holds: keeps all
  CHECK(three->size() == 3);
  three->shrink(1);
  CHECK(three->size() == 1);
  CHECK(ferry::test::pool_count(served.domain.name()).free == 2);
  auto two = pub.loan_many(2);  // one batch at a time
  REQUIRE_FALSE(two);
  CHECK(two.error() == ferry::ErrorCode::TooManyLoans);
  (*three)[0].seq = 7;
  CHECK(pub.publish_many(std::move(*three)).delivered == 0);  // no subscriber
  CHECK(pub.loan_many(2));
}

TEST_CASE("a publisher killed while it holds a pooled batch loses its chunks to ferryd's reclaim") {
  ServedConfig served(
      seq_config("  - { name: blobs, type: Blob, capacity: 4, policy: block, max_loans: 4 }\n",
                 kBlobType + "pool:\n  - { chunk_size: 16KiB, count: 8 }\n"));
  Signal holding;
  Child pub([&] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Blob>("blobs");
    auto batch = publisher.loan_many(4);
    if (!batch) return int{kLoan};
    holding.raise();
    std::this_thread::sleep_for(60s);  // killed here
    return int{kOk};
  });
  REQUIRE(holding.wait());
  CHECK(ferry::test::pool_count(served.domain.name()).free == 4);
  pub.kill(SIGKILL);
  CHECK(pub.wait() == 128 + SIGKILL);
  CHECK(ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f); }));
}
