// Single-threaded ring behaviour: on a Segment (shared memory, as in
// production) or on a heap buffer when the test corrupts the ring on
// purpose (ASan then sees any out-of-bounds access).

#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include "ferry/transport/ring.hpp"
#include "ferry/transport/ring_peek.hpp"
#include "ring_test_util.hpp"

using namespace ferry::transport;
using namespace ferry::test;
using namespace std::chrono_literals;

static_assert(!std::is_copy_constructible_v<RingProducer> &&
              std::is_nothrow_move_constructible_v<RingProducer>);
static_assert(!std::is_copy_constructible_v<RingConsumer> &&
              std::is_nothrow_move_constructible_v<RingConsumer>);

namespace {

std::span<const std::byte> bytes_of(const char* s) {
  return {reinterpret_cast<const std::byte*>(s), std::strlen(s)};
}
std::string string_of(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// A ring in a Segment plus its two handles.
struct ShmRing {
  explicit ShmRing(RingGeometry g, std::uint32_t initial_index = 0)
      : segment(create_ring_segment(domain, "ring", g, initial_index)),
        producer(*RingProducer::attach(segment.payload(), segment.payload_size())),
        consumer(*RingConsumer::attach(segment.payload(), segment.payload_size())) {}
  [[nodiscard]] RingStats stats() const {
    return read_ring_stats(segment.payload(), segment.payload_size());
  }
  [[nodiscard]] ring_layout::RingHeader& header() {
    return *reinterpret_cast<ring_layout::RingHeader*>(segment.payload());
  }
  TestDomain domain;
  Segment segment;
  RingProducer producer;
  RingConsumer consumer;
};

constexpr RingGeometry kSmall{.capacity = 4, .slot_size = 88, .mode = RingMode::Spsc};

// Pops the messages numbered first to last (make_message), in that order.
void pop_in_order(RingConsumer& consumer, std::uint64_t first, std::uint64_t last) {
  std::array<std::byte, 64> out{};
  for (std::uint64_t i = first; i <= last; ++i) {
    auto got = consumer.try_pop(out);
    REQUIRE(got.has_value());
    CHECK(check_message({out.data(), *got}) == i);
  }
}

// try_pop_ready()'s call and what it fills in.
struct ReadyPop {
  bool from(RingConsumer& consumer) { return consumer.try_pop_ready(out, length, flags, meta); }
  [[nodiscard]] std::span<const std::byte> message() const { return {out.data(), length}; }
  std::array<std::byte, 64> out{};
  std::uint32_t length = 0;
  std::uint32_t flags = 0;
  SlotMeta meta{};
};

// The ring's pushed and popped counters.
void check_counts(const ShmRing& r, std::uint64_t pushed, std::uint64_t popped) {
  const RingStats s = r.stats();
  CHECK(s.pushed == pushed);
  CHECK(s.popped == popped);
}

// Messages 0 and 1 pushed, then slot 0's length overwritten with an
// impossible value, as a broken producer would (a heap ring: ASan sees any
// read the length would lead to).
struct CorruptFirstSlot {
  CorruptFirstSlot()
      : ring(kSmall),
        producer(*RingProducer::attach(ring.mem(), ring.bytes())),
        consumer(*RingConsumer::attach(ring.mem(), ring.bytes())) {
    std::array<std::byte, 56> buf{};
    REQUIRE(producer.try_push(make_message(0, 16, buf.data())).has_value());
    REQUIRE(producer.try_push(make_message(1, 16, buf.data())).has_value());
    std::memcpy(slot0(), &kHuge, sizeof kHuge);
  }
  [[nodiscard]] std::byte* slot0() const {
    return static_cast<std::byte*>(ring.mem()) + ring_layout::kSlotsOffset;
  }
  static constexpr std::uint32_t kHuge = 0x7fffffff;
  HeapRing ring;
  RingProducer producer;
  RingConsumer consumer;
};

}  // namespace

TEST_CASE("an empty ring pops nothing") {
  ShmRing r(kSmall);
  std::array<std::byte, 64> out{};
  auto got = r.consumer.try_pop(out);
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error() == RingError::Empty);
  CHECK_FALSE(r.consumer.has_data());
  CHECK_FALSE(r.consumer.ready());
  const RingStats s = r.stats();
  CHECK(s.valid);
  CHECK(s.backlog == 0);
  CHECK(s.popped == 0);
}

TEST_CASE("a message comes out as it went in, with its flags") {
  ShmRing r(kSmall);
  REQUIRE(r.producer.try_push(bytes_of("hello ring"), 42).has_value());
  CHECK(r.consumer.has_data());
  std::array<std::byte, 64> out{};
  std::uint32_t flags = 0;
  auto got = r.consumer.try_pop(out, &flags);
  REQUIRE(got.has_value());
  CHECK(string_of({out.data(), *got}) == "hello ring");
  CHECK(flags == 42);
  REQUIRE(r.producer.try_push({}, 1).has_value());  // empty messages are messages too
  got = r.consumer.try_pop(out, &flags);
  REQUIRE(got.has_value());
  CHECK(*got == 0);
  CHECK(flags == 1);
}

TEST_CASE("max_backlog counts a backlog that never filled the ring") {
  ShmRing r(kSmall);
  std::array<std::byte, 56> buf{};
  const std::uint64_t waiting = kSmall.capacity - 2;  // the producer never finds it full
  for (std::uint64_t i = 0; i < waiting; ++i) {
    REQUIRE(r.producer.try_push(make_message(i, 16, buf.data())).has_value());
  }
  CHECK(r.stats().backlog == waiting);
  CHECK(r.stats().max_backlog == waiting);  // seen by the snapshot itself
  std::array<std::byte, 64> out{};
  for (std::uint64_t i = 0; i < waiting; ++i) REQUIRE(r.consumer.try_pop(out).has_value());
  CHECK(r.stats().backlog == 0);
  CHECK(r.stats().max_backlog == waiting);  // the consumer saw it when it read tail
  // A new consumer continues from the stored value, never lowers it.
  auto again = RingConsumer::attach(r.segment.payload(), r.segment.payload_size());
  REQUIRE(again.has_value());
  REQUIRE(r.producer.try_push(make_message(7, 16, buf.data())).has_value());
  REQUIRE(again->try_pop(out).has_value());
  CHECK(r.stats().max_backlog == waiting);
}

TEST_CASE("a full ring refuses a push until a message is taken") {
  ShmRing r(kSmall);
  std::array<std::byte, 56> buf{};
  for (std::uint64_t i = 0; i < kSmall.capacity; ++i) {
    REQUIRE(r.producer.try_push(make_message(i, 16, buf.data())).has_value());
  }
  auto full = r.producer.try_push(make_message(99, 16, buf.data()));
  REQUIRE_FALSE(full.has_value());
  CHECK(full.error() == RingError::Full);
  CHECK_FALSE(r.producer.has_room());
  CHECK(r.stats().backlog == kSmall.capacity);
  CHECK(r.stats().max_backlog == kSmall.capacity);
  CHECK(r.stats().dropped == 0);  // Full is not a drop until the caller says so
  r.producer.count_dropped();
  CHECK(r.stats().dropped == 1);

  std::array<std::byte, 64> out{};
  auto got = r.consumer.try_pop(out);
  REQUIRE(got.has_value());
  CHECK(check_message({out.data(), *got}) == 0);
  CHECK(r.producer.try_push(make_message(4, 16, buf.data())).has_value());
  pop_in_order(r.consumer, 1, 4);
  check_counts(r, 5, 5);
}

TEST_CASE("try_push refuses a full ring and a message too large having written nothing") {
  ShmRing r(kSmall);
  std::array<std::byte, 56> buf{};
  for (std::uint64_t i = 0; i < kSmall.capacity; ++i) {
    REQUIRE(r.producer.try_push(make_message(i, 16, buf.data()), 7, SlotMeta{i, 5, 100 + i}));
  }
  CHECK(r.producer.try_push(make_message(99, 16, buf.data()), 7, {}).error() == RingError::Full);
  std::array<std::byte, 57> too_large{};
  CHECK(r.producer.try_push(too_large, 7, {}).error() == RingError::TooLarge);
  CHECK(r.stats().pushed == kSmall.capacity);
  CHECK(r.stats().backlog == kSmall.capacity);

  std::array<std::byte, 64> out{};
  std::uint32_t flags = 0;
  SlotMeta meta{};
  auto got = r.consumer.try_pop(out, &flags, &meta);
  REQUIRE(got.has_value());
  CHECK(check_message({out.data(), *got}) == 0);
  CHECK(flags == 7);
  CHECK(meta == SlotMeta{0, 5, 100});
  // Room again: the cached head is stale, so this re-reads it.
  REQUIRE(r.producer.try_push(make_message(4, 16, buf.data()), 7, SlotMeta{4, 5, 104}));
  for (std::uint64_t i = 1; i <= 4; ++i) {
    got = r.consumer.try_pop(out, &flags, &meta);
    REQUIRE(got.has_value());
    CHECK(check_message({out.data(), *got}) == i);
    CHECK(meta == SlotMeta{i, 5, 100 + i});
  }
}

TEST_CASE("prefetch_next_slot is only a hint: pushes, pops and stats are as without it") {
  ShmRing r(kSmall);
  std::array<std::byte, 56> buf{};
  std::array<std::byte, 64> out{};
  const std::uint32_t payload_max = r.producer.max_message_size();
  const auto hint_every_size = [&] {
    for (std::uint32_t size : {0U, 1U, 16U, payload_max, payload_max + 1, 1U << 20})
      r.producer.prefetch_next_slot(size);
  };
  std::uint64_t next_pop = 0;
  for (std::uint64_t i = 0; i < 3 * kSmall.capacity; ++i) {
    hint_every_size();  // empty, partly full, and (below) full
    REQUIRE(r.producer.try_push(make_message(i, 16, buf.data()), 3, SlotMeta{i, 9, i}));
    if (i % kSmall.capacity != kSmall.capacity - 1) continue;
    hint_every_size();
    CHECK(r.producer.try_push(make_message(99, 16, buf.data())).error() == RingError::Full);
    for (std::uint32_t k = 0; k < kSmall.capacity; ++k, ++next_pop) {
      SlotMeta meta{};
      auto got = r.consumer.try_pop(out, nullptr, &meta);
      REQUIRE(got.has_value());
      CHECK(check_message({out.data(), *got}) == next_pop);
      CHECK(meta == SlotMeta{next_pop, 9, next_pop});
    }
  }
  const RingStats s = r.stats();
  CHECK(s.pushed == 3 * kSmall.capacity);
  CHECK(s.popped == 3 * kSmall.capacity);
  CHECK(s.corrupt == 0);
  CHECK(s.backlog == 0);
}

TEST_CASE("try_pop_ready takes only what ready() saw, and leaves every other case to try_pop") {
  ShmRing r(kSmall);
  ReadyPop p;
  CHECK_FALSE(r.consumer.ready());
  CHECK_FALSE(p.from(r.consumer));

  REQUIRE(r.producer.try_push(bytes_of("seen"), 3, SlotMeta{41, 42, 43}).has_value());
  CHECK_FALSE(p.from(r.consumer));  // ready() was not asked since
  REQUIRE(r.consumer.ready());
  REQUIRE(p.from(r.consumer));
  CHECK(string_of(p.message()) == "seen");
  CHECK(p.flags == 3);
  CHECK(p.meta == SlotMeta{41, 42, 43});
  CHECK(r.stats().popped == 1);
  CHECK(r.stats().backlog == 0);
  CHECK_FALSE(p.from(r.consumer));  // nothing left that ready() saw

  // A buffer too small: nothing taken, try_pop reports it.
  REQUIRE(r.producer.try_push(bytes_of("twelve bytes")).has_value());
  REQUIRE(r.consumer.ready());
  std::array<std::byte, 11> small{};
  CHECK_FALSE(r.consumer.try_pop_ready(small, p.length, p.flags, p.meta));
  CHECK(r.stats().backlog == 1);
  CHECK(r.consumer.try_pop(small).error() == RingError::BufferTooSmall);
  REQUIRE(p.from(r.consumer));
  CHECK(string_of(p.message()) == "twelve bytes");
}

TEST_CASE("try_pop_ready never trusts a corrupt length: try_pop skips and counts it") {
  CorruptFirstSlot r;
  ReadyPop p;
  REQUIRE(r.consumer.ready());
  CHECK_FALSE(p.from(r.consumer));
  CHECK(read_ring_stats(r.ring.mem()).corrupt == 0);  // not its job
  CHECK(r.consumer.try_pop(p.out).error() == RingError::CorruptSlot);
  REQUIRE(p.from(r.consumer));  // the next one is fine
  CHECK(check_message(p.message()) == 1);
  CHECK(read_ring_stats(r.ring.mem()).corrupt == 1);
}

TEST_CASE("try_pop_ready leaves an overwrite-mode ring to try_pop") {
  ShmRing r(RingGeometry{.capacity = 4, .slot_size = 88, .mode = RingMode::Overwrite});
  REQUIRE(r.producer.try_push(bytes_of("kept")).has_value());
  ReadyPop p;
  REQUIRE(r.consumer.ready());
  CHECK_FALSE(p.from(r.consumer));
  auto got = r.consumer.try_pop(p.out);
  REQUIRE(got.has_value());
  CHECK(string_of({p.out.data(), *got}) == "kept");
}

TEST_CASE("a message larger than the slot payload is refused with TooLarge") {
  ShmRing r(kSmall);
  CHECK(r.producer.max_message_size() == 56);
  std::array<std::byte, 57> big{};
  CHECK(r.producer.try_push(std::span(big).first(56)).has_value());
  auto refused = r.producer.try_push(big);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == RingError::TooLarge);
  CHECK(r.producer.push(big, 0, 1s).error() == RingError::TooLarge);
  CHECK(r.producer.stage_many(big.data(), 1, 57, 0, {}) == 0);
  CHECK(r.stats().pushed == 1);
}

TEST_CASE("indices wrapping past 2^32 keep order and content") {
  const std::uint32_t start = std::numeric_limits<std::uint32_t>::max() - 20;
  ShmRing r({.capacity = 8, .slot_size = 88, .mode = RingMode::Spsc}, start);
  std::array<std::byte, 56> buf{};
  std::array<std::byte, 64> out{};
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (int round = 0; round < 1500; ++round) {
    const int burst = 1 + round % 8;  // 1..8 messages: full rings included
    for (int i = 0; i < burst; ++i, ++sent) {
      REQUIRE(r.producer.try_push(make_message(sent, message_length(sent, 56), buf.data()))
                  .has_value());
    }
    for (int i = 0; i < burst; ++i, ++received) {
      auto got = r.consumer.try_pop(out);
      REQUIRE(got.has_value());
      CHECK(*got == message_length(received, 56));
      REQUIRE(check_message({out.data(), *got}) == received);
    }
    CHECK(r.consumer.try_pop(out).error() == RingError::Empty);
  }
  const RingStats s = r.stats();
  CHECK(s.tail == static_cast<std::uint32_t>(start + sent));
  CHECK(s.tail < start);  // it did wrap
  CHECK(s.backlog == 0);
  CHECK(s.pushed == sent);
}

TEST_CASE("push on a full ring times out after the timeout, not before, and does not hang") {
  ShmRing r(kSmall);
  std::array<std::byte, 8> buf{};
  for (std::uint32_t i = 0; i < kSmall.capacity; ++i) REQUIRE(r.producer.try_push(buf).has_value());
  for (const std::uint32_t spin : {0U, kDefaultSpinLimit}) {
    r.producer.set_spin_limit(spin);
    const auto start = std::chrono::steady_clock::now();
    auto res = r.producer.push(buf, 0, 50ms);
    const auto waited = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error() == RingError::Timeout);
    CHECK(waited >= 50ms);
    CHECK(waited < 1s);
  }
  CHECK(r.stats().timed_out == 2);
  CHECK(r.header().space_bell.sleeping.load() == 0);  // the flag is cleared after the wait
}

TEST_CASE("pop on an empty ring times out after the timeout, not before, and does not hang") {
  ShmRing r(kSmall);
  std::array<std::byte, 64> out{};
  for (const std::uint32_t spin : {0U, kDefaultSpinLimit}) {
    r.consumer.set_spin_limit(spin);
    const auto start = std::chrono::steady_clock::now();
    auto res = r.consumer.pop(out, nullptr, 50ms);
    const auto waited = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error() == RingError::Timeout);
    CHECK(waited >= 50ms);
    CHECK(waited < 1s);
  }
  CHECK(r.header().data_bell.sleeping.load() == 0);
}

TEST_CASE("pop sleeping on an empty ring wakes as soon as a message is pushed") {
  ShmRing r(kSmall);
  r.consumer.set_spin_limit(0);
  std::thread producer([&] {
    std::this_thread::sleep_for(30ms);
    REQUIRE(r.producer.try_push(bytes_of("late")).has_value());
  });
  std::array<std::byte, 64> out{};
  const auto start = std::chrono::steady_clock::now();
  auto got = r.consumer.pop(out, nullptr, 10s);
  const auto waited = std::chrono::steady_clock::now() - start;
  producer.join();
  REQUIRE(got.has_value());
  CHECK(string_of({out.data(), *got}) == "late");
  CHECK(waited < 2s);
}

TEST_CASE("an invalid length in a slot is skipped and counted, never trusted") {
  CorruptFirstSlot r;
  std::array<std::byte, 64> out{};
  auto got = r.consumer.try_pop(out);
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error() == RingError::CorruptSlot);
  got = r.consumer.try_pop(out);  // the next one is fine
  REQUIRE(got.has_value());
  CHECK(check_message({out.data(), *got}) == 1);
  const RingStats s = read_ring_stats(r.ring.mem());
  CHECK(s.corrupt == 1);
  CHECK(s.popped == 1);
  CHECK(s.backlog == 0);

  // The lane's short way never takes it either: try_pop skips it as above.
  std::array<std::byte, 56> buf{};
  REQUIRE(r.producer.try_push(make_message(2, 16, buf.data())).has_value());
  std::memcpy(r.slot0() + 2 * kSmall.slot_size, &CorruptFirstSlot::kHuge,
              sizeof CorruptFirstSlot::kHuge);
  REQUIRE(r.consumer.ready());
  std::uint32_t length = 0;
  std::uint32_t flags = 0;
  SlotMeta meta{};
  CHECK_FALSE(r.consumer.try_pop_ready(out, length, flags, meta));
  CHECK(r.consumer.try_pop(out).error() == RingError::CorruptSlot);
  CHECK(read_ring_stats(r.ring.mem()).corrupt == 2);
}

TEST_CASE("a caller buffer too small leaves the message in the ring") {
  ShmRing r(kSmall);
  REQUIRE(r.producer.try_push(bytes_of("twelve bytes")).has_value());
  std::array<std::byte, 11> small{};
  auto got = r.consumer.try_pop(small);
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error() == RingError::BufferTooSmall);
  CHECK(r.stats().backlog == 1);
  std::array<std::byte, 12> exact{};
  got = r.consumer.try_pop(exact);
  REQUIRE(got.has_value());
  CHECK(string_of({exact.data(), *got}) == "twelve bytes");
}

TEST_CASE(
    "corrupting mask, capacity and slot size in shared memory has no effect on attached handles") {
  HeapRing ring(kSmall);
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  auto& geo = ring.header().geometry;
  geo.capacity = 1U << 20;
  geo.mask = 0xffffffff;
  geo.slot_size = 1U << 20;
  std::array<std::byte, 56> buf{};
  std::array<std::byte, 64> out{};
  for (std::uint64_t i = 0; i < 100; ++i) {
    for (std::uint64_t k = 0; k < kSmall.capacity; ++k) {
      const std::uint64_t seq = i * kSmall.capacity + k;
      REQUIRE(
          producer.try_push(make_message(seq, message_length(seq, 56), buf.data())).has_value());
    }
    CHECK(producer.try_push(buf).error() == RingError::Full);  // still capacity 4
    for (std::uint64_t k = 0; k < kSmall.capacity; ++k) {
      auto got = consumer.try_pop(out);
      REQUIRE(got.has_value());
      CHECK(check_message({out.data(), *got}) == i * kSmall.capacity + k);
    }
  }
  // A new handle checks the geometry and refuses it.
  CHECK(RingProducer::attach(ring.mem(), ring.bytes()).error() == RingError::BadLayout);
  CHECK(RingConsumer::attach(ring.mem(), ring.bytes()).error() == RingError::BadLayout);
}

TEST_CASE("corrupt indices are reported, never followed") {
  HeapRing ring(kSmall);
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  ring.header().producer.tail.store(1000);  // tail - head = 1000 > capacity
  std::array<std::byte, 64> out{};
  CHECK(consumer.try_pop(out).error() == RingError::CorruptIndices);
  CHECK(consumer.try_pop(out).error() == RingError::CorruptIndices);
  CHECK(consumer.pop(out, nullptr, 10ms).error() == RingError::CorruptIndices);
  CHECK(RingConsumer::attach(ring.mem(), ring.bytes()).error() == RingError::CorruptIndices);
  ring.header().producer.tail.store(0);
  ring.header().consumer.head.store(0x80000000U);  // head far ahead of tail
  std::array<std::byte, 8> buf{};
  for (int i = 0; i < 8; ++i) (void)producer.try_push(buf);  // exhausts the cached head
  CHECK(producer.try_push(buf).error() == RingError::CorruptIndices);
  CHECK(producer.push(buf, 0, 10ms).error() == RingError::CorruptIndices);
}

TEST_CASE("attach refuses memory that is not a ring of this layout") {
  HeapRing ring(kSmall);
  CHECK(RingConsumer::attach(ring.mem(), ring.bytes() - 1).error() == RingError::TooSmall);
  CHECK(RingConsumer::attach(ring.mem(), 100).error() == RingError::TooSmall);
  CHECK(RingConsumer::attach(static_cast<std::byte*>(ring.mem()) + 8, ring.bytes() - 8).error() ==
        RingError::Misaligned);
  SUBCASE("magic") { ring.header().geometry.magic = 0x12345678; }
  SUBCASE("version") { ring.header().geometry.layout_version = kRingLayoutVersion + 1; }
  SUBCASE("capacity not a power of two") {
    ring.header().geometry.capacity = 3;
    ring.header().geometry.mask = 2;
  }
  SUBCASE("slot size") { ring.header().geometry.slot_size = 60; }
  SUBCASE("mode") { ring.header().geometry.mode = 9; }
  SUBCASE("size") { ring.header().geometry.total_bytes += 64; }
  CHECK(RingProducer::attach(ring.mem(), ring.bytes()).error() == RingError::BadLayout);
  CHECK(RingConsumer::attach(ring.mem(), ring.bytes()).error() == RingError::BadLayout);
  const bool foreign = ring.header().geometry.magic != kRingMagic ||
                       ring.header().geometry.layout_version != kRingLayoutVersion;
  CHECK(read_ring_stats(ring.mem()).valid == !foreign);
}

TEST_CASE("format refuses invalid geometry") {
  HeapBuffer buf(1 << 16);
  CHECK(format_ring(buf.ptr, buf.bytes, {.capacity = 3, .slot_size = 88}).error() ==
        RingError::InvalidGeometry);
  CHECK(format_ring(buf.ptr, buf.bytes, {.capacity = 0, .slot_size = 88}).error() ==
        RingError::InvalidGeometry);
  CHECK(format_ring(buf.ptr, buf.bytes, {.capacity = 4, .slot_size = 12}).error() ==
        RingError::InvalidGeometry);
  CHECK(format_ring(buf.ptr, buf.bytes, {.capacity = 4, .slot_size = 68}).error() ==
        RingError::InvalidGeometry);
  CHECK(format_ring(buf.ptr, buf.bytes, {.capacity = 4096, .slot_size = 88}).error() ==
        RingError::TooSmall);
  CHECK(format_ring(buf.ptr + 8, buf.bytes - 8, {.capacity = 4, .slot_size = 88}).error() ==
        RingError::Misaligned);
  CHECK(ring_bytes({.capacity = 3, .slot_size = 88}) == 0);
  CHECK(ring_bytes({.capacity = 4, .slot_size = 88}) == 5 * 64 + 4 * 88);
  CHECK_FALSE(to_string(RingError::InvalidGeometry).empty());
}

TEST_CASE("a stale sleeping flag is cleared on attach") {
  HeapRing ring(kSmall);
  // A consumer and a producer killed inside futex_wait left their flags set.
  ring.header().data_bell.sleeping.store(1);
  ring.header().space_bell.sleeping.store(1);
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  CHECK(ring.header().data_bell.sleeping.load() == 0);
  CHECK(ring.header().space_bell.sleeping.load() == 1);  // not the consumer's side
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  CHECK(ring.header().space_bell.sleeping.load() == 0);
  // With both flags clear, traffic rings no doorbell at all.
  std::array<std::byte, 8> buf{};
  std::array<std::byte, 64> out{};
  for (int i = 0; i < 10; ++i) {
    REQUIRE(producer.try_push(buf).has_value());
    REQUIRE(consumer.try_pop(out).has_value());
  }
  CHECK(ring.header().data_bell.seq.load() == 0);
  CHECK(ring.header().space_bell.seq.load() == 0);
}

TEST_CASE("an external doorbell is left to its owner on attach") {
  HeapRing ring(kSmall);
  DoorbellWord bell;
  bell.sleeping.store(1);  // its owner may be waiting on it for another ring right now
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes(), &bell);
  CHECK(bell.sleeping.load() == 1);
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes(), &bell);
  REQUIRE(producer.try_push(bytes_of("x")).has_value());
  CHECK(bell.seq.load() == 1);                     // rung, because "somebody" sleeps there
  CHECK(ring.header().data_bell.seq.load() == 0);  // the ring's own doorbell is not used
  doorbell_reset_sleeping(bell);
  CHECK(bell.sleeping.load() == 0);
  CHECK(&consumer.data_doorbell() == &bell);
}

TEST_CASE("a batch is published with one tail store and at most one notification") {
  ShmRing r({.capacity = 8, .slot_size = 88, .mode = RingMode::Spsc});
  r.header().data_bell.sleeping.store(1);  // pretend the consumer sleeps: every notify bumps seq
  std::array<std::byte, 5 * 16> first{};
  for (std::uint64_t i = 0; i < 5; ++i) (void)make_message(i, 16, first.data() + i * 16);
  REQUIRE(r.producer.stage_many(first.data(), 5, 16, 0, {}) == 5);
  CHECK(r.stats().tail == 0);  // staged is invisible
  std::array<std::byte, 64> out{};
  CHECK(r.consumer.try_pop(out).error() == RingError::Empty);
  CHECK(r.header().data_bell.seq.load() == 0);
  CHECK(r.producer.publish() == 5);
  CHECK(r.stats().tail == 5);  // one store, 0 -> 5
  CHECK(r.header().data_bell.seq.load() == 1);
  CHECK(r.producer.publish() == 0);  // nothing staged: no store, no notification
  CHECK(r.header().data_bell.seq.load() == 1);

  // As many as fit, published at once; then nothing fits.
  std::array<std::byte, 6 * 16> second{};
  for (std::uint64_t i = 0; i < 6; ++i) (void)make_message(5 + i, 16, second.data() + i * 16);
  CHECK(r.producer.stage_many(second.data(), 6, 16, 0, {}) == 3);  // 5 + 3 = capacity 8
  CHECK(r.producer.publish() == 3);
  CHECK(r.stats().tail == 8);
  CHECK(r.header().data_bell.seq.load() == 2);
  CHECK(r.producer.stage_many(second.data(), 6, 16, 0, {}) == 0);
  CHECK(r.producer.publish() == 0);
  CHECK(r.header().data_bell.seq.load() == 2);
  // A single push that finds the ring full publishes nothing either.
  CHECK(r.producer.try_push(std::span(second).first(16)).error() == RingError::Full);
  CHECK(r.header().data_bell.seq.load() == 2);
  pop_in_order(r.consumer, 0, 7);
  CHECK(r.stats().pushed == 8);
}

TEST_CASE("a single push also publishes what stage_many left staged, even when it is refused") {
  ShmRing r(kSmall);
  std::array<std::byte, 2 * 16> staged{};
  for (std::uint64_t i = 0; i < 2; ++i) (void)make_message(i, 16, staged.data() + i * 16);
  REQUIRE(r.producer.stage_many(staged.data(), 2, 16, 0, {}) == 2);
  std::array<std::byte, 57> too_large{};
  CHECK(r.producer.try_push(too_large).error() == RingError::TooLarge);
  CHECK(r.stats().tail == 2);
  std::array<std::byte, 56> buf{};
  REQUIRE(r.producer.stage_many(make_message(2, 16, buf.data()).data(), 1, 16, 0, {}) == 1);
  REQUIRE(r.producer.try_push(make_message(3, 16, buf.data())).has_value());
  CHECK(r.stats().tail == 4);
  pop_in_order(r.consumer, 0, 3);
}

TEST_CASE("overwrite mode keeps the newest messages and hands every discarded one to on_discard") {
  ShmRing r({.capacity = 4, .slot_size = 88, .mode = RingMode::Overwrite});
  std::vector<std::uint64_t> discarded;
  std::vector<std::uint32_t> discarded_flags;
  auto on_discard = [&](std::span<const std::byte> payload, std::uint32_t flags) {
    discarded.push_back(check_message(payload));
    discarded_flags.push_back(flags);
  };
  std::array<std::byte, 56> buf{};
  std::uint64_t overwrote = 0;
  for (std::uint64_t i = 0; i < 10; ++i) {
    auto res = r.producer.try_push_overwrite(make_message(i, message_length(i, 56), buf.data()),
                                             static_cast<std::uint32_t>(i), on_discard);
    REQUIRE(res.has_value());
    if (*res == PushOutcome::Overwrote) ++overwrote;
  }
  CHECK(overwrote == 6);
  CHECK(discarded == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5});
  CHECK(discarded_flags == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  std::array<std::byte, 64> out{};
  std::vector<std::uint64_t> taken;
  std::uint32_t flags = 0;
  while (true) {
    auto got = r.consumer.try_pop(out, &flags);
    if (!got) {
      CHECK(got.error() == RingError::Empty);
      break;
    }
    taken.push_back(check_message({out.data(), *got}));
    CHECK(flags == taken.back());
  }
  CHECK(taken == std::vector<std::uint64_t>{6, 7, 8, 9});
  const RingStats s = r.stats();
  CHECK(s.pushed == 10);
  CHECK(s.overwritten == 6);
  CHECK(s.popped == 4);
  CHECK(s.popped + s.overwritten == s.pushed);
}

TEST_CASE("overwrite mode with a consumer keeping up discards nothing") {
  ShmRing r({.capacity = 2, .slot_size = 88, .mode = RingMode::Overwrite});
  std::uint64_t discards = 0;
  std::array<std::byte, 56> buf{};
  for (std::uint64_t i = 0; i < 1000; ++i) {
    auto res = r.producer.try_push_overwrite(
        make_message(i, 24, buf.data()), 0,
        [&](std::span<const std::byte>, std::uint32_t) { ++discards; });
    REQUIRE(res.has_value());
    CHECK(*res == PushOutcome::Appended);
    if (i % 2 == 1) pop_in_order(r.consumer, i - 1, i);
  }
  CHECK(discards == 0);
  CHECK(r.stats().overwritten == 0);
}

TEST_CASE("overwrite mode reports a small buffer and a corrupt slot like the plain mode") {
  HeapRing ring({.capacity = 4, .slot_size = 88, .mode = RingMode::Overwrite});
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  auto ignore = [](std::span<const std::byte>, std::uint32_t) {};
  REQUIRE(producer.try_push_overwrite(bytes_of("0123456789"), 0, ignore).has_value());
  REQUIRE(producer.try_push_overwrite(bytes_of("abc"), 0, ignore).has_value());
  std::array<std::byte, 4> small{};
  CHECK(consumer.try_pop(small).error() == RingError::BufferTooSmall);
  const std::uint32_t huge = 1000;
  std::memcpy(static_cast<std::byte*>(ring.mem()) + ring_layout::kSlotsOffset, &huge, sizeof huge);
  CHECK(consumer.try_pop(small).error() == RingError::CorruptSlot);
  auto got = consumer.try_pop(small);
  REQUIRE(got.has_value());
  CHECK(string_of({small.data(), *got}) == "abc");
  CHECK(read_ring_stats(ring.mem()).corrupt == 1);
  // In-place access is Spsc only: the producer may rewrite a slot under a reader.
  auto visit = [](std::span<const std::byte>, std::uint32_t) {};
  CHECK(consumer.consume_many(1, visit).error() == RingError::WrongMode);
}

TEST_CASE("try_push_overwrite is refused on a plain ring") {
  ShmRing r(kSmall);
  auto res = r.producer.try_push_overwrite(bytes_of("x"), 0,
                                           [](std::span<const std::byte>, std::uint32_t) {});
  REQUIRE_FALSE(res.has_value());
  CHECK(res.error() == RingError::WrongMode);
}

TEST_CASE("a reattached producer and consumer continue from the stored indices and counters") {
  ShmRing r(kSmall);
  std::array<std::byte, 56> buf{};
  std::array<std::byte, 64> out{};
  for (std::uint64_t i = 0; i < 3; ++i)
    REQUIRE(r.producer.try_push(make_message(i, 16, buf.data())).has_value());
  REQUIRE(r.consumer.try_pop(out).has_value());
  auto producer2 = *RingProducer::attach(r.segment.payload(), r.segment.payload_size());
  auto consumer2 = *RingConsumer::attach(r.segment.payload(), r.segment.payload_size());
  REQUIRE(producer2.try_push(make_message(3, 16, buf.data())).has_value());
  pop_in_order(consumer2, 1, 3);
  check_counts(r, 4, 4);
}

TEST_CASE("ring stats can be read from a read-only mapping") {
  TestDomain domain;
  auto seg = create_ring_segment(domain, "ring", kSmall);
  auto producer = *RingProducer::attach(seg.payload(), seg.payload_size());
  std::array<std::byte, 8> buf{};
  REQUIRE(producer.try_push(buf).has_value());
  REQUIRE(producer.try_push(buf).has_value());
  auto ro = Segment::open(seg.name(), SegmentKind::Ring, kRingLayoutForTests, 0ms,
                          SegmentAccess::ReadOnly);
  REQUIRE(ro.has_value());
  const RingStats s = read_ring_stats(ro->payload(), ro->payload_size());
  CHECK(s.valid);
  CHECK(s.capacity == 4);
  CHECK(s.slot_size == 88);
  CHECK(s.mode == RingMode::Spsc);
  CHECK(s.pushed == 2);
  CHECK(s.backlog == 2);
  CHECK_FALSE(read_ring_stats(ro->payload(), 10).valid);
}

TEST_CASE("a producer that dies between writing a slot and publishing it leaves nothing visible") {
  ShmRing r(kSmall);
  {
    auto dying = *RingProducer::attach(r.segment.payload(), r.segment.payload_size());
    const auto half_done = bytes_of("half-done");
    REQUIRE(dying.stage_many(half_done.data(), 1, 9, 0, {}) == 1);  // slot written, tail not stored
  }  // the handle goes away as a killed process would: no publish
  std::array<std::byte, 64> out{};
  CHECK(r.consumer.try_pop(out).error() == RingError::Empty);
  auto next = *RingProducer::attach(r.segment.payload(), r.segment.payload_size());
  REQUIRE(next.try_push(bytes_of("whole")).has_value());
  auto got = r.consumer.try_pop(out);
  REQUIRE(got.has_value());
  CHECK(string_of({out.data(), *got}) == "whole");
  CHECK(r.consumer.try_pop(out).error() == RingError::Empty);
}

TEST_CASE("every message carries its SlotMeta through each way in and out of the ring") {
  std::array<std::byte, 64> out{};
  std::uint32_t flags = 0;
  SlotMeta meta{};
  SUBCASE("try_push, stage_many and publish; try_pop, try_pop_ready, pop") {
    ShmRing r(kSmall);
    REQUIRE(r.producer.try_push(bytes_of("a"), 1, SlotMeta{1, 2, 3}).has_value());
    const auto bc = bytes_of("bc");
    REQUIRE(r.producer.stage_many(bc.data(), 2, 1, 1, SlotMeta{4, 5, 6}) == 2);
    CHECK(r.producer.publish() == 2);
    REQUIRE(r.consumer.try_pop(out, &flags, &meta).has_value());
    CHECK(meta == SlotMeta{1, 2, 3});
    REQUIRE(r.consumer.ready());
    std::uint32_t length = 0;
    REQUIRE(r.consumer.try_pop_ready(out, length, flags, meta));
    CHECK(meta == SlotMeta{4, 5, 6});  // the batch's first keeps its sequence
    REQUIRE(r.consumer.pop(out, &flags, 10ms, &meta).has_value());
    CHECK(string_of(std::span(out).first(1)) == "c");
    CHECK(meta == SlotMeta{5, 5, 6});  // the next one, the next sequence
  }
  SUBCASE("overwrite mode: the kept messages keep theirs, a peek sees them too") {
    ShmRing r({.capacity = 2, .slot_size = 88, .mode = RingMode::Overwrite});
    for (std::uint64_t i = 0; i < 5; ++i) {
      REQUIRE(r.producer
                  .try_push_overwrite(
                      bytes_of("x"), 0, [](std::span<const std::byte>, std::uint32_t) {},
                      SlotMeta{i, 77, 1000 + i})
                  .has_value());
    }
    const auto peeked = peek_ring(r.segment.payload(), r.segment.payload_size(), 8);
    REQUIRE(peeked.size() == 2);
    CHECK(peeked[0].meta == SlotMeta{3, 77, 1003});
    CHECK(peeked[1].meta == SlotMeta{4, 77, 1004});
    for (std::uint64_t i = 3; i < 5; ++i) {
      REQUIRE(r.consumer.try_pop(out, &flags, &meta).has_value());
      CHECK(meta == SlotMeta{i, 77, 1000 + i});
    }
  }
}

// ---- batches ----------------------------------------------------------------

namespace {
// `n` 8-byte messages holding first, first + 1, ...
std::vector<std::uint64_t> counting(std::uint64_t first, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = first + i;
  return v;
}
const std::byte* as_bytes_ptr(const std::vector<std::uint64_t>& v) {
  return reinterpret_cast<const std::byte*>(v.data());
}
}  // namespace

TEST_CASE(
    "stage_many stages what fits with one sequence per message; consume_many takes them in order") {
  ShmRing r(RingGeometry{.capacity = 8, .slot_size = 64, .mode = RingMode::Spsc});
  const auto msgs = counting(100, 12);
  const SlotMeta meta{7, 9, 11};
  CHECK(r.producer.stage_many(as_bytes_ptr(msgs), msgs.size(), 8, 3, meta) == 8);
  CHECK(r.stats().tail == 0);  // staged, not yet visible
  CHECK(r.producer.publish() == 8);
  CHECK(r.stats().tail == 8);
  CHECK(r.producer.stage_many(as_bytes_ptr(msgs), 1, 8, 0, meta) == 0);  // full
  std::vector<std::uint64_t> got;
  auto freed = r.consumer.consume_many(5, [&](std::span<const std::byte> m, std::uint32_t flags) {
    CHECK(flags == 3);
    REQUIRE(m.size() == 8);
    std::uint64_t v = 0;
    std::memcpy(&v, m.data(), 8);
    got.push_back(v);
  });
  REQUIRE(freed.has_value());
  CHECK(*freed == 5);
  CHECK(r.stats().head == 5);  // one head store for the five
  CHECK(r.stats().popped == 5);
  // The sequences went up one per message, the rest of the metadata shared.
  std::array<std::byte, 8> buf{};
  SlotMeta m{};
  REQUIRE(r.consumer.try_pop(buf, nullptr, &m).has_value());
  CHECK(m.sequence == 7 + 5);
  CHECK(m.publisher_id == 9);
  CHECK(m.publish_time_ns == 11);
  CHECK(got == counting(100, 5));
}

TEST_CASE("consume_many skips and counts a slot with an impossible length") {
  CorruptFirstSlot c;
  std::size_t seen = 0;
  auto freed =
      c.consumer.consume_many(8, [&](std::span<const std::byte>, std::uint32_t) { ++seen; });
  REQUIRE(freed.has_value());
  CHECK(*freed == 2);
  CHECK(seen == 1);
  CHECK(read_ring_stats(c.ring.mem(), c.ring.bytes()).corrupt == 1);
}

TEST_CASE("try_push_overwrite_many keeps the newest capacity messages and counts what went") {
  ShmRing r(RingGeometry{.capacity = 8, .slot_size = 64, .mode = RingMode::Overwrite});
  std::vector<std::uint64_t> discarded;
  auto on_discard = [&](std::span<const std::byte> m, std::uint32_t) {
    std::uint64_t v = 0;
    if (m.size() == 8) std::memcpy(&v, m.data(), 8);
    discarded.push_back(v);
  };
  const auto first = counting(0, 3);
  auto n = r.producer.try_push_overwrite_many(as_bytes_ptr(first), 3, 8, 0, {}, on_discard);
  REQUIRE(n.has_value());
  CHECK(*n == 0);
  // 3 queued + 20 into 8 slots: 15 overwritten (3 queued discarded with one
  // CAS, the batch's first 12 never written), as 20 single pushes would.
  const auto second = counting(3, 20);
  n = r.producer.try_push_overwrite_many(as_bytes_ptr(second), 20, 8, 0, SlotMeta{3, 0, 0},
                                         on_discard);
  REQUIRE(n.has_value());
  CHECK(*n == 15);
  CHECK(discarded == counting(0, 3));
  CHECK(r.stats().overwritten == 15);
  std::vector<std::uint64_t> got;
  std::array<std::byte, 56> buf{};
  SlotMeta meta{};
  while (auto len = r.consumer.try_pop(buf, nullptr, &meta)) {
    std::uint64_t v = 0;
    std::memcpy(&v, buf.data(), 8);
    CHECK(meta.sequence == v);  // the kept ones carry their own sequence
    got.push_back(v);
  }
  CHECK(got == counting(15, 8));
}
