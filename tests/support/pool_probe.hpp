#pragma once
// Reads a running domain's pool from outside, as `ferry pool` would: a
// read-only mapping and the pool's own counters (a scan of every chunk).

#include <chrono>
#include <cstdint>
#include <string>

#include "ferry/discovery/objects.hpp"
#include "ferry/transport/pool.hpp"
#include "ferry/transport/segment.hpp"

namespace ferry::test {

struct PoolCount {
  std::uint64_t total = 0;
  std::uint64_t free = 0;
};

// The pool's counters (invalid and stale references, ...) and, scanned,
// every class's chunks; not valid when the domain has no pool (yet).
inline transport::PoolStats pool_stats(const std::string& domain) {
  auto segment = transport::Segment::open(
      discovery::pool_object_name(domain), discovery::kPoolKind, transport::kPoolLayoutVersion,
      std::chrono::milliseconds(1000), transport::SegmentAccess::ReadOnly);
  if (!segment) return {};
  return transport::read_pool_stats(segment->payload(), segment->payload_size(), true);
}

inline PoolCount pool_count(const std::string& domain) {
  const auto stats = pool_stats(domain);
  PoolCount count;
  for (std::uint32_t c = 0; c < stats.class_count; ++c) {
    count.total += stats.classes[c].total;
    count.free += stats.classes[c].free;
  }
  return count;
}

// True when every chunk is free again (waits a little for ferryd's reclaim).
template <class Eventually>
bool pool_all_free(const std::string& domain, Eventually&& eventually) {
  return eventually([&] {
    const auto c = pool_count(domain);
    return c.total > 0 && c.free == c.total;
  });
}

}  // namespace ferry::test
