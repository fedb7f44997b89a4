// Formatting a pool and attaching to one: the layout computed from the
// classes, checked against the shared header once, kept privately.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "ferry/transport/pool.hpp"
#include "pool_geometry.hpp"

namespace ferry::transport {

using namespace pool_layout;
namespace st = pool_layout::state;
using detail::Layout;

namespace {

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) noexcept {
  return (v + a - 1) / a * a;
}

// The layout of classes sorted by ascending chunk size (multiples of 64),
// with `holder_nodes` overflow nodes.
std::expected<Layout, PoolError> compute_layout(const PoolClassSpec* classes, std::uint32_t n,
                                                std::uint32_t holder_nodes) noexcept {
  if (n == 0 || n > kMaxPoolClasses) return std::unexpected(PoolError::InvalidGeometry);
  if (holder_nodes == 0 || holder_nodes > kMaxHolderNodes)
    return std::unexpected(PoolError::InvalidGeometry);
  Layout l;
  l.class_count = n;
  std::uint64_t off = kClassTableOffset + std::uint64_t{n} * sizeof(ClassEntry);
  const std::uint64_t counters_at = off;
  off += std::uint64_t{n} * sizeof(ClassCounters);
  std::uint64_t prev = 0;
  for (std::uint32_t c = 0; c < n; ++c) {
    const std::uint64_t size = classes[c].chunk_size;
    const std::uint32_t count = classes[c].count;
    if (size < kMinPoolChunkSize || size > kMaxPoolChunkSize || size % kCacheLine != 0 ||
        size <= prev) {
      return std::unexpected(PoolError::InvalidGeometry);
    }
    if (count == 0 || count > kMaxChunksPerClass)
      return std::unexpected(PoolError::InvalidGeometry);
    prev = size;
    ClassEntry& e = l.entries[c];
    e.chunk_size = size;
    e.count = count;
    e.hint_words = (count + 63) / 64;
    e.counters_offset = counters_at + std::uint64_t{c} * sizeof(ClassCounters);
    e.meta_offset = off;
    off += std::uint64_t{count} * sizeof(ChunkMeta);
    e.hint_offset = off;
    off += round_up(std::uint64_t{e.hint_words} * sizeof(std::uint64_t), kCacheLine);
    l.total_chunks += count;
  }
  for (std::uint32_t c = 0; c < n; ++c) {
    ClassEntry& e = l.entries[c];
    e.payload_offset = off;
    off += e.chunk_size * e.count;  // <= 2^30 * 2^24: no overflow, and 32 of them neither
  }
  // The overflow-node area last: the chunks' metadata and payloads sit where
  // they would without it, so their offsets (and which of their lines alias
  // in the caches) do not depend on the node area's size.
  l.holder_nodes = holder_nodes;
  l.node_hint_words = (holder_nodes + 63) / 64;
  l.node_counters_offset = off;
  off += sizeof(NodeCounters);
  l.node_meta_offset = off;
  off += std::uint64_t{holder_nodes} * sizeof(ChunkMeta);
  l.node_hint_offset = off;
  off += round_up(std::uint64_t{l.node_hint_words} * sizeof(std::uint64_t), kCacheLine);
  l.total_bytes = off;
  return l;
}

// `count` nodes, every one Free at generation 1 with its hint bit set.
void format_free(ChunkMeta* meta, std::atomic<std::uint64_t>* hints, std::uint32_t count,
                 std::uint32_t hint_words) noexcept {
  for (std::uint32_t i = 0; i < count; ++i) {
    auto* m = new (&meta[i]) ChunkMeta{};
    // SYNC: relaxed throughout: nothing runs concurrently with format_pool;
    // the release store of the magic (and Segment::seal) publishes it all.
    m->state.store(st::make_free(1), std::memory_order_relaxed);
  }
  const std::uint32_t padded = static_cast<std::uint32_t>(round_up(hint_words, kCacheLine / 8));
  for (std::uint32_t w = 0; w < padded; ++w) {
    std::uint64_t bits = 0;
    if (w + 1 < hint_words) {
      bits = ~std::uint64_t{0};
    } else if (w + 1 == hint_words) {
      const std::uint32_t rest = count - w * 64;  // 1..64
      bits = rest == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << rest) - 1;
    }
    new (&hints[w]) std::atomic<std::uint64_t>(bits);
  }
}

}  // namespace

namespace detail {

std::expected<Layout, PoolError> layout_of(const PoolGeometry& g) noexcept {
  const std::size_t n = g.classes.size();
  if (n == 0 || n > kMaxPoolClasses) return std::unexpected(PoolError::InvalidGeometry);
  std::array<PoolClassSpec, kMaxPoolClasses> sorted{};
  for (std::size_t c = 0; c < n; ++c) {
    const std::uint64_t size = g.classes[c].chunk_size;
    if (size == 0 || size > kMaxPoolChunkSize) return std::unexpected(PoolError::InvalidGeometry);
    sorted[c] = {round_up(size, kCacheLine), g.classes[c].count};
  }
  std::sort(
      sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n),
      [](const PoolClassSpec& a, const PoolClassSpec& b) { return a.chunk_size < b.chunk_size; });
  std::uint64_t chunks = 0;
  for (std::size_t c = 0; c < n; ++c) chunks += sorted[c].count;
  const std::uint32_t nodes = g.holder_nodes != 0 ? g.holder_nodes : default_holder_nodes(chunks);
  return compute_layout(sorted.data(), static_cast<std::uint32_t>(n), nodes);
}

std::expected<Layout, PoolError> read_layout(const void* mem, std::size_t bytes) noexcept {
  if (mem == nullptr || reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return std::unexpected(PoolError::Misaligned);
  }
  if (bytes < kClassTableOffset) return std::unexpected(PoolError::TooSmall);
  const auto* base = static_cast<const std::byte*>(mem);
  const auto* header = reinterpret_cast<const PoolHeader*>(base + kHeaderOffset);
  // SYNC: acquire, pairs with the release store of the magic in format_pool:
  // the header and tables written before it are visible.
  if (header->magic.load(std::memory_order_acquire) != kPoolMagic)
    return std::unexpected(PoolError::BadLayout);
  // Each field read once, into locals, then checked.
  const std::uint32_t version = header->layout_version;
  const std::uint32_t n = header->class_count;
  const std::uint32_t slots = header->slots_per_node;
  const std::uint32_t meta_size = header->meta_size;
  const std::uint64_t table_offset = header->class_table_offset;
  const std::uint64_t total = header->total_bytes;
  const std::uint32_t holder_nodes = header->holder_nodes;
  const std::uint64_t node_meta_offset = header->node_meta_offset;
  const std::uint64_t node_hint_offset = header->node_hint_offset;
  if (version != kPoolLayoutVersion || slots != kSlotsPerNode || meta_size != sizeof(ChunkMeta) ||
      table_offset != kClassTableOffset || n == 0 || n > kMaxPoolClasses) {
    return std::unexpected(PoolError::BadLayout);
  }
  if (bytes < kClassTableOffset + std::uint64_t{n} * sizeof(ClassEntry))
    return std::unexpected(PoolError::TooSmall);
  std::array<ClassEntry, kMaxPoolClasses> stored{};
  std::memcpy(stored.data(), base + kClassTableOffset, n * sizeof(ClassEntry));
  std::array<PoolClassSpec, kMaxPoolClasses> specs{};
  for (std::uint32_t c = 0; c < n; ++c) specs[c] = {stored[c].chunk_size, stored[c].count};
  auto layout = compute_layout(specs.data(), n, holder_nodes);
  if (!layout) return std::unexpected(PoolError::BadLayout);
  if (layout->node_meta_offset != node_meta_offset || layout->node_hint_offset != node_hint_offset)
    return std::unexpected(PoolError::BadLayout);
  for (std::uint32_t c = 0; c < n; ++c) {
    const ClassEntry& want = layout->entries[c];
    const ClassEntry& got = stored[c];
    if (got.hint_words != want.hint_words || got.meta_offset != want.meta_offset ||
        got.hint_offset != want.hint_offset || got.payload_offset != want.payload_offset ||
        got.counters_offset != want.counters_offset) {
      return std::unexpected(PoolError::BadLayout);
    }
  }
  if (total != layout->total_bytes) return std::unexpected(PoolError::BadLayout);
  if (bytes < total) return std::unexpected(PoolError::TooSmall);
  return layout;
}

}  // namespace detail

using detail::layout_of;
using detail::read_layout;

std::uint32_t default_holder_nodes(std::uint64_t total_chunks) noexcept {
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(total_chunks, 64, kMaxHolderNodes));
}

std::uint32_t holder_nodes_for(std::uint64_t chunks, std::uint64_t holders) noexcept {
  // A chain of k nodes has 13 + 13 (k - 1) holder slots: the chunk's own 13
  // and 13 per overflow node.
  const std::uint64_t per_chunk =
      holders <= kHolderSlotsPerNode
          ? 0
          : (holders - kHolderSlotsPerNode + kHolderSlotsPerNode - 1) / kHolderSlotsPerNode;
  std::uint64_t nodes = 0;
  if (per_chunk != 0 && __builtin_mul_overflow(chunks, per_chunk, &nodes)) nodes = kMaxHolderNodes;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(nodes, 64, kMaxHolderNodes));
}

std::size_t pool_bytes(const PoolGeometry& geometry) noexcept {
  auto l = layout_of(geometry);
  return l ? static_cast<std::size_t>(l->total_bytes) : 0;
}

std::expected<void, PoolError> validate_geometry(const PoolGeometry& geometry) noexcept {
  auto l = layout_of(geometry);
  if (!l) return std::unexpected(l.error());
  return {};
}

std::expected<void, PoolError> format_pool(void* mem, std::size_t bytes,
                                           const PoolGeometry& geometry) noexcept {
  auto l = layout_of(geometry);
  if (!l) return std::unexpected(l.error());
  if (mem == nullptr || reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return std::unexpected(PoolError::Misaligned);
  }
  if (bytes < l->total_bytes) return std::unexpected(PoolError::TooSmall);
  auto* base = static_cast<std::byte*>(mem);
  auto* header = new (base + kHeaderOffset) PoolHeader{};
  new (base + kCountersOffset) PoolCounters{};
  for (std::uint32_t c = 0; c < l->class_count; ++c) {
    const ClassEntry& e = l->entries[c];
    std::memcpy(base + kClassTableOffset + c * sizeof(ClassEntry), &e, sizeof e);
    new (base + e.counters_offset) ClassCounters{};
    format_free(reinterpret_cast<ChunkMeta*>(base + e.meta_offset),
                reinterpret_cast<std::atomic<std::uint64_t>*>(base + e.hint_offset), e.count,
                e.hint_words);
  }
  new (base + l->node_counters_offset) NodeCounters{};
  format_free(reinterpret_cast<ChunkMeta*>(base + l->node_meta_offset),
              reinterpret_cast<std::atomic<std::uint64_t>*>(base + l->node_hint_offset),
              l->holder_nodes, l->node_hint_words);
  header->layout_version = kPoolLayoutVersion;
  header->class_count = l->class_count;
  header->slots_per_node = kSlotsPerNode;
  header->holder_nodes = l->holder_nodes;
  header->node_meta_offset = l->node_meta_offset;
  header->node_hint_offset = l->node_hint_offset;
  header->total_bytes = l->total_bytes;
  header->meta_size = sizeof(ChunkMeta);
  header->class_table_offset = kClassTableOffset;
  header->total_chunks = l->total_chunks;
  // SYNC: release, pairs with the acquire load in read_layout (attach,
  // read_pool_stats) for openers that did not get the memory through a seal.
  header->magic.store(kPoolMagic, std::memory_order_release);
  return {};
}

// ---------------------------------------------------------------------------

std::expected<Pool, PoolError> Pool::attach(void* mem, std::size_t bytes) noexcept {
  auto l = read_layout(mem, bytes);
  if (!l) return std::unexpected(l.error());
  auto* base = static_cast<std::byte*>(mem);
  Pool p;
  p.base_ = base;
  p.bytes_ = bytes;
  p.counters_ = reinterpret_cast<PoolCounters*>(base + kCountersOffset);
  p.class_count_ = l->class_count;
  // Handles of different processes start their search in different places,
  // so that they do not all contend for the first hint word.
  const auto spread = static_cast<std::uint32_t>(::getpid()) * 2654435761U;
  for (std::uint32_t c = 0; c < l->class_count; ++c) {
    const ClassEntry& e = l->entries[c];
    ClassView& v = p.classes_[c];
    v.chunk_size = e.chunk_size;
    v.count = e.count;
    v.hint_words = e.hint_words;
    v.meta = reinterpret_cast<ChunkMeta*>(base + e.meta_offset);
    v.hints = reinterpret_cast<std::atomic<std::uint64_t>*>(base + e.hint_offset);
    v.payload = base + e.payload_offset;
    v.counters = reinterpret_cast<ClassCounters*>(base + e.counters_offset);
    p.cursor_[c] = (spread >> 8) % e.hint_words;
  }
  p.nodes_.count = l->holder_nodes;
  p.nodes_.hint_words = l->node_hint_words;
  p.nodes_.meta = reinterpret_cast<ChunkMeta*>(base + l->node_meta_offset);
  p.nodes_.hints = reinterpret_cast<std::atomic<std::uint64_t>*>(base + l->node_hint_offset);
  p.nodes_.counters = reinterpret_cast<NodeCounters*>(base + l->node_counters_offset);
  p.node_cursor_ = (spread >> 8) % l->node_hint_words;
  return p;
}

bool Pool::contains(const void* p) const noexcept {
  const auto* b = static_cast<const std::byte*>(p);
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    if (b >= cv.payload && b < cv.payload + cv.chunk_size * cv.count) return true;
  }
  return false;
}

}  // namespace ferry::transport
