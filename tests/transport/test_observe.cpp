// The read-only views `ferry pool` uses: the messages waiting in a ring
// (peek_ring) and every live chunk with its holders (Pool::live_chunks).
// Neither may change what it reads.

#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <vector>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/ring_peek.hpp"
#include "pool_test_util.hpp"
#include "ring_test_util.hpp"

using namespace ferry::transport;
using namespace ferry::test;

namespace {

std::span<const std::byte> bytes_of(const char* s) {
  return {reinterpret_cast<const std::byte*>(s), std::strlen(s)};
}
std::string string_of(const std::vector<std::byte>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

TEST_CASE(
    "peek_ring copies what waits between head and tail, with flags and a prefix, and moves "
    "nothing") {
  // Start near the wrap of the free-running indices.
  HeapRing ring({.capacity = 4, .slot_size = 88}, 0xFFFF'FFFEU);
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  CHECK(peek_ring(ring.mem(), ring.bytes(), 16).empty());
  REQUIRE(producer.try_push(bytes_of("first"), 0).has_value());
  REQUIRE(producer.try_push(bytes_of("second message"), 1).has_value());
  REQUIRE(producer.try_push(bytes_of("third"), 7).has_value());
  std::array<std::byte, 64> out{};
  REQUIRE(consumer.try_pop(out).has_value());

  const auto before = read_ring_stats(ring.mem(), ring.bytes());
  const auto waiting = peek_ring(ring.mem(), ring.bytes(), 6);
  REQUIRE(waiting.size() == 2);
  CHECK(waiting[0].flags == 1);
  CHECK(waiting[0].length == 14);
  CHECK(string_of(waiting[0].prefix) == "second");
  CHECK(waiting[1].flags == 7);
  CHECK(waiting[1].length == 5);
  CHECK(string_of(waiting[1].prefix) == "third");
  const auto after = read_ring_stats(ring.mem(), ring.bytes());
  CHECK(after.head == before.head);
  CHECK(after.tail == before.tail);
  CHECK(after.popped == before.popped);

  // The consumer still gets both, in order.
  std::uint32_t flags = 0;
  auto n = consumer.try_pop(out, &flags);
  REQUIRE(n.has_value());
  CHECK(*n == 14);
  CHECK(flags == 1);
}

TEST_CASE("peek_ring refuses memory that is not a ring") {
  HeapBuffer junk(4096);
  CHECK(peek_ring(junk.ptr, junk.bytes, 16).empty());
  CHECK(peek_ring(nullptr, 0, 16).empty());
}

TEST_CASE("live_chunks lists each live chunk with its origin and open holders") {
  HeapPool hp(PoolGeometry{{{64, 4}, {256, 2}}});
  Pool& pool = hp.pool;
  CHECK(pool.live_chunks().empty());
  constexpr OwnerId kPub = 1, kSub = 2, kOther = 3;
  const auto loan = *pool.allocate(100, kPub);  // the 256 B class
  const auto sent = *pool.allocate(10, kPub);
  REQUIRE(pool.give(sent, kPub, kSub, 2).has_value());
  REQUIRE(pool.accept(sent, kSub, kPub).has_value());
  REQUIRE(pool.release(sent, kPub).has_value());
  const auto freed = *pool.allocate(10, kOther);
  REQUIRE(pool.release(freed, kOther).has_value());

  const auto chunks = pool.live_chunks();
  REQUIRE(chunks.size() == 2);
  const LiveChunk& a = chunks[0].ref == sent ? chunks[0] : chunks[1];
  const LiveChunk& b = chunks[0].ref == sent ? chunks[1] : chunks[0];
  CHECK(a.ref == sent);
  CHECK(a.chunk_size == 64);
  CHECK(a.origin == kPub);
  REQUIRE(a.holder_count == 1);  // the publisher let go of its own
  CHECK(a.holders[0].owner == kSub);
  CHECK(a.holders[0].giver == kPub);
  CHECK(a.holders[0].held == 1);
  CHECK(a.holders[0].pending == 1);
  CHECK(b.ref == loan);
  CHECK(b.chunk_size == 256);
  CHECK(b.origin == kPub);
  REQUIRE(b.holder_count == 1);
  CHECK(b.holders[0].owner == kPub);
  CHECK(b.holders[0].giver == kNoOwner);
  CHECK(b.holders[0].held == 1);
  CHECK(b.holders[0].pending == 0);
}
