#pragma once
// Helpers shared by the pool tests: pools over a heap buffer or a Segment,
// self-checking payloads, and the "everything came back" check.

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>

#include "ferry/transport/names.hpp"
#include "ferry/transport/pool.hpp"
#include "ferry/transport/segment.hpp"
#include "ring_test_util.hpp"

namespace ferry::test {

inline constexpr std::uint32_t kPoolLayoutForTests = transport::kPoolLayoutVersion;

// A formatted pool on the heap (ASan sees any access outside it).
inline transport::Pool format_and_attach(const HeapBuffer& buffer,
                                         const transport::PoolGeometry& g) {
  if (!transport::format_pool(buffer.ptr, buffer.bytes, g)) std::abort();
  auto p = transport::Pool::attach(buffer.ptr, buffer.bytes);
  if (!p) std::abort();
  return std::move(*p);
}
struct HeapPool {
  explicit HeapPool(const transport::PoolGeometry& g)
      : buffer(transport::pool_bytes(g)), pool(format_and_attach(buffer, g)) {}
  [[nodiscard]] std::byte* mem() const { return buffer.ptr; }
  [[nodiscard]] std::size_t bytes() const { return buffer.bytes; }
  HeapBuffer buffer;
  transport::Pool pool;
};

// A formatted, sealed pool in a Segment named after the test domain.
inline transport::Segment create_pool_segment(const TestDomain& domain, const std::string& what,
                                              const transport::PoolGeometry& g) {
  auto seg = transport::Segment::create(transport::shm_name(domain.name(), what),
                                        transport::SegmentKind::Pool, kPoolLayoutForTests,
                                        transport::pool_bytes(g));
  if (!seg) std::abort();
  if (!transport::format_pool(seg->payload(), seg->payload_size(), g)) std::abort();
  seg->seal();
  return std::move(*seg);
}

inline transport::Segment open_pool_segment(
    const std::string& domain, const std::string& what,
    transport::SegmentAccess access = transport::SegmentAccess::ReadWrite) {
  auto seg =
      transport::Segment::open(transport::shm_name(domain, what), transport::SegmentKind::Pool,
                               kPoolLayoutForTests, std::chrono::seconds(5), access);
  if (!seg) std::abort();
  return std::move(*seg);
}

// Self-checking payload: 8-byte stamp, then bytes derived from it, over the
// first `limit` bytes of the chunk (whole chunks would make big classes slow)
// and the last 8 bytes.
inline std::uint8_t payload_byte(std::uint64_t stamp, std::size_t i) {
  return static_cast<std::uint8_t>((stamp * 0x9E37 + i * 31 + 7) & 0xff);
}
inline void fill_payload(std::span<std::byte> p, std::uint64_t stamp, std::size_t limit = 256) {
  std::memcpy(p.data(), &stamp, 8);
  const std::size_t n = std::min(p.size() - 8, limit);
  for (std::size_t i = 8; i < n; ++i) p[i] = static_cast<std::byte>(payload_byte(stamp, i));
  std::memcpy(p.data() + p.size() - 8, &stamp, 8);
}
// The stamp if intact, else UINT64_MAX.
inline std::uint64_t check_payload(std::span<const std::byte> p, std::size_t limit = 256) {
  std::uint64_t stamp = 0;
  std::uint64_t tail = 0;
  std::memcpy(&stamp, p.data(), 8);
  std::memcpy(&tail, p.data() + p.size() - 8, 8);
  if (stamp != tail) return UINT64_MAX;
  const std::size_t n = std::min(p.size() - 8, limit);
  for (std::size_t i = 8; i < n; ++i) {
    if (p[i] != static_cast<std::byte>(payload_byte(stamp, i))) return UINT64_MAX;
  }
  return stamp;
}

// Every chunk of every class is free, and the accounting holds.
inline bool all_free(const transport::Pool& pool) {
  const transport::PoolStats s = pool.stats();
  bool ok = s.valid;
  for (std::uint32_t c = 0; c < s.class_count; ++c)
    ok = ok && s.classes[c].free == s.classes[c].total;
  const transport::AccountingReport r = pool.check_accounting();
  return ok && r.ok && r.free == r.total;
}

// `exact_counters` false: a simulated crash inside allocate/release may leave
// the running in_use counter off by one (the pool's crash table says so).
inline void check_all_free(const transport::Pool& pool, bool exact_counters = true) {
  const transport::PoolStats s = pool.stats();
  REQUIRE(s.valid);
  for (std::uint32_t c = 0; c < s.class_count; ++c) {
    INFO("class " << c << " (" << s.classes[c].chunk_size << " B)");
    CHECK(s.classes[c].free == s.classes[c].total);
    if (exact_counters) CHECK(s.classes[c].in_use == 0);
  }
  const transport::AccountingReport r = pool.check_accounting();
  INFO("corrupt " << r.corrupt << ", claimed " << r.claimed << ", closing " << r.closing_slots
                  << ", unhinted " << r.unhinted_free << ", ownerless " << r.ownerless_live);
  CHECK(r.ok);
  CHECK(r.free == r.total);
  CHECK(r.held_refs == 0);
  CHECK(r.pending_refs == 0);
}

// A request size for a kMixed-like pool: mostly small, sometimes up to
// 64 KiB, so that every size class is used.
inline std::size_t random_size(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return 1 + rng() % 65536;
    case 1:
    case 2:
      return 1 + rng() % 16384;
    case 3:
      return 1 + rng() % 1024;
    default:
      return 1 + rng() % 64;
  }
}

}  // namespace ferry::test
