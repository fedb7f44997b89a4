#pragma once
// Private to the pool: the whole layout of a pool, computed from its classes.
// format_pool, Pool::attach and read_pool_stats all use it (pool_format.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/pool_layout.hpp"

namespace ferry::transport::detail {

// Offsets and sizes of every class (ascending chunk sizes, multiples of 64).
struct Layout {
  std::uint32_t class_count = 0;
  std::array<pool_layout::ClassEntry, kMaxPoolClasses> entries{};
  std::uint64_t total_bytes = 0;
  std::uint64_t total_chunks = 0;
  // The overflow-node area.
  std::uint32_t holder_nodes = 0;
  std::uint32_t node_hint_words = 0;
  std::uint64_t node_counters_offset = 0;
  std::uint64_t node_meta_offset = 0;
  std::uint64_t node_hint_offset = 0;
};

// The layout of a geometry, rounded and sorted; InvalidGeometry when it has
// none.
[[nodiscard]] std::expected<Layout, PoolError> layout_of(const PoolGeometry& g) noexcept;

// Reads and checks the header and class table of the pool in `mem`, once:
// attach recomputes the layout from the shared class table and requires
// every stored offset to match.
[[nodiscard]] std::expected<Layout, PoolError> read_layout(const void* mem,
                                                           std::size_t bytes) noexcept;

}  // namespace ferry::transport::detail
