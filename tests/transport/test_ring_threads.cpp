// Threaded ring tests over a heap buffer: the same algorithm as across
// processes, but visible to ThreadSanitizer (label "tsan").

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ferry/transport/doorbell.hpp"
#include "ferry/transport/ring.hpp"
#include "ring_test_util.hpp"

using namespace ferry::transport;
using namespace ferry::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPayload = 56;  // 64-byte slots

// Receives `count` messages with pop(), checking order and content; returns
// the number of errors (and the longest single pop in *max_wait_ns).
std::uint64_t receive_in_order(RingConsumer& consumer, std::uint64_t count,
                               std::int64_t* max_wait_ns) {
  std::array<std::byte, kPayload> out{};
  std::uint64_t errors = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::int64_t t0 = now_ns();
    std::uint32_t flags = 0;
    auto got = consumer.pop(out, &flags, 5s);
    *max_wait_ns = std::max(*max_wait_ns, now_ns() - t0);
    if (!got || *got != message_length(i, kPayload) || check_message({out.data(), *got}) != i ||
        flags != static_cast<std::uint32_t>(i)) {
      ++errors;
      if (!got) break;
    }
  }
  return errors;
}

// The producer of the spinning tests: messages 0..n-1 (flags: their
// sequence number), each try_push retried with a backoff until it fits.
void push_spinning(HeapRing& ring, std::uint64_t n) {
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  std::array<std::byte, kPayload> buf{};
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto msg = make_message(i, message_length(i, kPayload), buf.data());
    for (Backoff backoff; !producer.try_push(msg, static_cast<std::uint32_t>(i));) backoff();
  }
}

}  // namespace

TEST_CASE("threads: a spinning producer and consumer pass every message in order, intact") {
  HeapRing ring({.capacity = 64, .slot_size = 88, .mode = RingMode::Spsc});
  const std::uint64_t n = scaled(1'000'000);
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  std::thread producer_thread([&] { push_spinning(ring, n); });
  std::array<std::byte, kPayload> out{};
  std::uint64_t errors = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint32_t flags = 0;
    auto got = consumer.try_pop(out, &flags);
    for (Backoff backoff; !got && got.error() == RingError::Empty;
         got = consumer.try_pop(out, &flags))
      backoff();
    if (!got || check_message({out.data(), *got}) != i || *got != message_length(i, kPayload) ||
        flags != static_cast<std::uint32_t>(i)) {
      ++errors;
    }
  }
  producer_thread.join();
  CHECK(errors == 0);
  const RingStats s = read_ring_stats(ring.mem());
  CHECK(s.pushed == n);
  CHECK(s.popped == n);
}

TEST_CASE("threads: producer and consumer that sleep as often as possible lose no wake-up") {
  HeapRing ring({.capacity = 2, .slot_size = 88, .mode = RingMode::Spsc});
  const std::uint64_t n = scaled(100'000, 10);
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  consumer.set_spin_limit(0);
  std::int64_t producer_max_wait = 0;
  std::uint64_t producer_errors = 0;
  std::thread producer_thread([&] {
    auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
    producer.set_spin_limit(0);
    std::array<std::byte, kPayload> buf{};
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::int64_t t0 = now_ns();
      if (!producer.push(make_message(i, message_length(i, kPayload), buf.data()),
                         static_cast<std::uint32_t>(i), 5s)) {
        ++producer_errors;
      }
      producer_max_wait = std::max(producer_max_wait, now_ns() - t0);
    }
  });
  std::int64_t consumer_max_wait = 0;
  const std::uint64_t errors = receive_in_order(consumer, n, &consumer_max_wait);
  producer_thread.join();
  CHECK(errors == 0);
  CHECK(producer_errors == 0);
  MESSAGE("longest push " << producer_max_wait / 1000 << " us, longest pop "
                          << consumer_max_wait / 1000 << " us");
  // A lost wake-up would cost a whole 5 s timeout.
  CHECK(producer_max_wait < 2'000'000'000);
  CHECK(consumer_max_wait < 2'000'000'000);
}

TEST_CASE("threads: batches arrive whole and in order") {
  HeapRing ring({.capacity = 16, .slot_size = 88, .mode = RingMode::Spsc});
  const std::uint64_t n = scaled(300'000);
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  std::thread producer_thread([&] {
    auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
    // Batches of 1-5 messages of one length (stage_many's), back to back.
    std::array<std::byte, 5 * kPayload> storage{};
    std::uint64_t next = 0;
    Backoff backoff;
    while (next < n) {
      const std::size_t k = std::min<std::uint64_t>(1 + next % 5, n - next);
      const std::uint32_t len = message_length(next, kPayload);
      for (std::size_t j = 0; j < k; ++j) (void)make_message(next + j, len, &storage[j * len]);
      const std::size_t staged = producer.stage_many(storage.data(), k, len, 0, {});
      if (staged != 0) {
        (void)producer.publish();
        next += staged;
        backoff.reset();
      } else {
        backoff();
      }
    }
  });
  // Flags are 0 here: check content and order only.
  std::array<std::byte, kPayload> out{};
  std::uint64_t errors = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    auto got = consumer.pop(out, nullptr, 5s);
    if (!got || check_message({out.data(), *got}) != i) ++errors;
  }
  producer_thread.join();
  CHECK(errors == 0);
}

TEST_CASE("threads: messages read in place by consume_many arrive intact, in order") {
  HeapRing ring({.capacity = 8, .slot_size = 88, .mode = RingMode::Spsc});
  const std::uint64_t n = scaled(300'000);
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  std::thread producer_thread([&] { push_spinning(ring, n); });
  std::uint64_t errors = 0;
  std::uint64_t next = 0;
  Backoff backoff;
  while (next < n) {
    auto freed = consumer.consume_many(3, [&](std::span<const std::byte> m, std::uint32_t flags) {
      if (check_message(m) != next || flags != static_cast<std::uint32_t>(next)) ++errors;
      ++next;
    });
    if (!freed) {
      ++errors;
      break;
    }
    if (*freed == 0) {
      backoff();
    } else {
      backoff.reset();
    }
  }
  producer_thread.join();
  CHECK(errors == 0);
  CHECK(next == n);
}

TEST_CASE("threads: overwrite mode with a racing consumer never tears, duplicates or reorders") {
  for (const std::uint32_t capacity : {1U, 4U, 64U}) {
    CAPTURE(capacity);
    HeapRing ring({.capacity = capacity, .slot_size = 88, .mode = RingMode::Overwrite});
    const std::uint64_t n = scaled(400'000);
    auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
    std::vector<std::uint64_t> discarded;
    discarded.reserve(n);
    std::atomic<bool> done{false};
    std::uint64_t discard_errors = 0;
    std::thread producer_thread([&] {
      auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
      std::array<std::byte, kPayload> buf{};
      for (std::uint64_t i = 0; i < n; ++i) {
        auto r = producer.try_push_overwrite(
            make_message(i, message_length(i, kPayload), buf.data()), static_cast<std::uint32_t>(i),
            [&](std::span<const std::byte> payload, std::uint32_t flags) {
              const std::uint64_t seq = check_message(payload);
              if (seq == UINT64_MAX || flags != static_cast<std::uint32_t>(seq)) {
                ++discard_errors;
              }
              discarded.push_back(seq);
            });
        if (!r) ++discard_errors;
      }
      done.store(true, std::memory_order_release);
    });
    std::vector<std::uint64_t> taken;
    taken.reserve(n);
    std::uint64_t torn = 0;
    std::uint64_t contended = 0;
    std::array<std::byte, kPayload> out{};
    Backoff backoff;
    while (true) {
      const bool finished = done.load(std::memory_order_acquire);
      std::uint32_t flags = 0;
      auto got = consumer.try_pop(out, &flags);
      if (got) {
        const std::uint64_t seq = check_message({out.data(), *got});
        if (seq == UINT64_MAX || *got != message_length(seq, kPayload) ||
            flags != static_cast<std::uint32_t>(seq)) {
          ++torn;
        }
        taken.push_back(seq);
        backoff.reset();
      } else if (got.error() == RingError::Contended) {
        ++contended;
      } else if (got.error() == RingError::Empty) {
        if (finished) break;
        backoff();  // the producer may share our CPU
      } else {
        FAIL("unexpected error " << to_string(got.error()));
      }
    }
    producer_thread.join();
    CHECK(torn == 0);
    CHECK(discard_errors == 0);
    CHECK(std::is_sorted(taken.begin(), taken.end()));
    CHECK(std::adjacent_find(taken.begin(), taken.end()) == taken.end());  // no duplicate
    CHECK(std::is_sorted(discarded.begin(), discarded.end()));
    // Every message was either taken or discarded, exactly once.
    std::vector<std::uint64_t> all;
    all.reserve(n);
    std::merge(taken.begin(), taken.end(), discarded.begin(), discarded.end(),
               std::back_inserter(all));
    CHECK(all.size() == n);
    bool exact = all.size() == n;
    for (std::uint64_t i = 0; exact && i < n; ++i) exact = all[i] == i;
    CHECK(exact);
    const RingStats s = read_ring_stats(ring.mem());
    CHECK(s.pushed == n);
    CHECK(s.popped == taken.size());
    CHECK(s.overwritten == discarded.size());
    CHECK(s.popped + s.overwritten == s.pushed);
    MESSAGE("capacity " << capacity << ": taken " << taken.size() << ", overwritten "
                        << discarded.size() << ", contended " << contended);
  }
}

TEST_CASE("threads: one consumer sleeps on one doorbell for several rings") {
  constexpr int kRings = 3;
  const std::uint64_t n = scaled(30'000);
  std::vector<std::unique_ptr<HeapRing>> rings;
  DoorbellWord bell;  // the subscriber's doorbell, shared by its rings
  std::vector<RingConsumer> consumers;
  for (int r = 0; r < kRings; ++r) {
    rings.push_back(std::make_unique<HeapRing>(
        RingGeometry{.capacity = 8, .slot_size = 88, .mode = RingMode::Spsc}));
    consumers.push_back(*RingConsumer::attach(rings.back()->mem(), rings.back()->bytes(), &bell));
  }
  std::vector<std::thread> producers;
  for (int r = 0; r < kRings; ++r) {
    producers.emplace_back([&, r] {
      auto producer = *RingProducer::attach(rings[r]->mem(), rings[r]->bytes(), &bell);
      std::array<std::byte, kPayload> buf{};
      for (std::uint64_t i = 0; i < n; ++i) {
        (void)producer.push(make_message(i, message_length(i, kPayload), buf.data()), 0, 5s);
        if (i % 64 == static_cast<std::uint64_t>(r))
          std::this_thread::sleep_for(50us);  // let the consumer sleep
      }
    });
  }
  std::array<std::uint64_t, kRings> next{};
  std::uint64_t errors = 0;
  std::uint64_t sleeps = 0;
  std::uint64_t timeouts = 0;
  std::array<std::byte, kPayload> out{};
  auto any_data = [&] {
    return std::any_of(consumers.begin(), consumers.end(),
                       [](const RingConsumer& c) { return c.has_data(); });
  };
  while (std::any_of(next.begin(), next.end(), [&](std::uint64_t v) { return v < n; })) {
    bool got_any = false;
    for (int r = 0; r < kRings; ++r) {
      auto got = consumers[r].try_pop(out);
      if (got) {
        got_any = true;
        if (check_message({out.data(), *got}) != next[r]) ++errors;
        ++next[r];
      }
    }
    if (!got_any) {
      ++sleeps;
      if (doorbell_wait(bell, any_data, 2s) == WaitResult::TimedOut) ++timeouts;
    }
  }
  for (auto& t : producers) t.join();
  CHECK(errors == 0);
  CHECK(timeouts == 0);  // a lost wake-up would show as a 2 s timeout
  CHECK(bell.sleeping.load() == 0);
  MESSAGE("consumer went to sleep " << sleeps << " times");
}
